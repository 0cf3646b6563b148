"""Pooled name words of every usable Faker locale, for names with a long tail of tokens.

A locale is drawn first for a person (so that a name matches a birthplace), but organisations,
works and characters draw from these flat pools: over 10,000 surnames and given names, so that
two unrelated subjects rarely share a name token (the no-overlap sets of the paper, §4.1, need
subjects whose names share no token with any test subject).
"""

from __future__ import annotations

from functools import cache

from tasks.demo.names_locale import locale_names, usable_locales


@cache
def surname_pool() -> tuple[str, ...]:
    """Every Latin-script surname of every usable locale, deduplicated, in a fixed order."""
    names: dict[str, None] = {}
    for locale in usable_locales():
        found = locale_names(locale)
        assert found is not None
        names.update(dict.fromkeys(n for n in found.last if n.isalpha() and len(n) > 2))
    return tuple(names)


@cache
def given_pool() -> tuple[str, ...]:
    """Every Latin-script given name of every usable locale, deduplicated, in a fixed order."""
    names: dict[str, None] = {}
    for locale in usable_locales():
        found = locale_names(locale)
        assert found is not None
        names.update(dict.fromkeys(n for n in (*found.male, *found.female)
                                   if n.isalpha() and len(n) > 2))
    return tuple(names)
