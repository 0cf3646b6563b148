"""Person-name lists of Faker locales (Latin script only), read once and cached."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache

from tasks.demo.inventories import LOCALE_COUNTRIES, is_latin


@dataclass(frozen=True)
class LocaleNames:
    """First names by gender and surnames of one Faker locale (Latin script only)."""

    male: tuple[str, ...]
    female: tuple[str, ...]
    last: tuple[str, ...]


def _names(value: object, top: int | None = None) -> list[str]:
    if isinstance(value, dict):
        ordered = sorted(value.items(), key=lambda item: (-float(item[1]), item[0]))
        names = [name for name, _ in ordered]
    else:
        names = list(value or ())  # type: ignore[call-overload]
    names = [n for n in names if n and is_latin(n) and n[:1].isupper() and " " not in n]
    names = list(dict.fromkeys(names))
    return names[:top] if top else names


@cache
def locale_names(locale: str, top: int | None = None) -> LocaleNames | None:
    """Name lists of a Faker locale, or ``None`` when it has too few Latin-script names."""
    try:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
    except ImportError:
        return None
    romanised = hasattr(provider, "last_romanized_names")
    if romanised:
        male = getattr(provider, "first_romanized_names_male", None) or getattr(
            provider, "first_romanized_names", ())
        female = getattr(provider, "first_romanized_names_female", None) or getattr(
            provider, "first_romanized_names", ())
        last = provider.last_romanized_names
    else:
        # Locales without gendered first-name lists are left out: pronouns must match names.
        male = getattr(provider, "first_names_male", None)
        female = getattr(provider, "first_names_female", None)
        if not male or not female:
            return None
        last = getattr(provider, "last_names", ())
    result = LocaleNames(tuple(_names(male, top)), tuple(_names(female, top)),
                         tuple(_names(last, top)))
    if min(len(result.male), len(result.female), len(result.last)) < 5:
        return None
    return result


@cache
def usable_locales() -> tuple[str, ...]:
    """Locales with enough Latin-script names, in a fixed order."""
    return tuple(loc for loc in sorted(LOCALE_COUNTRIES) if locale_names(loc) is not None)
