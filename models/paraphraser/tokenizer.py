"""SentencePiece tokenisation with an extended (per-example) vocabulary for copying.

Copy unit
---------
Text is split on whitespace into words (lower-cased first when configured). Each word is
encoded by SentencePiece on its own, which gives the same pieces as encoding the sentence
(SentencePiece never merges across whitespace). A word is *out of vocabulary* when one of its
pieces is ``<unk>`` or a byte-fallback piece (``<0x..>``). For such a word the pieces that
cover the unknown characters are replaced by ONE copy unit whose surface is the original text
they cover, widened to the word's core (the word without leading/trailing punctuation) -- so
``"zyx?"`` becomes ``[OOV "zyx", "?"]`` and ``"kraków"`` becomes ``[OOV "kraków"]``. Each
distinct OOV surface of an example gets an extended id ``vocab_size + k`` (k = order of first
appearance in ``<suggestion> <sep> <source>``); the encoder sees ``<unk>`` at that position,
the copy distribution puts the attention mass on the extended id, and decoding an extended id
writes the surface text back. Target words whose core is in the example's OOV table get the
same extended id, so the model is trained to copy them. In-vocabulary words are copied piece by
piece (the attention distribution is scattered onto their piece ids).

With ``copy_word_pieces=N`` a word whose core SentencePiece splits into ``N`` or more pieces (the
bare word-boundary piece aside) is a *whole-word* copy unit too: the encoder still reads its
pieces, but each of them carries the word's extended id, and a target occurrence of the word is
that one id. Rare names, split into many pieces, are then copied whole or not at all -- never
piece by piece with a piece dropped or repeated ("crimson" -> "crimsonmson").

During training a share of in-vocabulary source words is *forced* to be OOV (``force``), so the
copy mechanism learns to copy words it cannot spell, as it must for a suggestion word never seen
in training.

Special tokens (``<pad>``, ``<s>``, ``</s>``, ``<sep>``, ``<none>``) are appended after the
SentencePiece pieces, so any SentencePiece model works (no user-defined symbols needed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import sentencepiece as spm

SPECIALS = ("<pad>", "<s>", "</s>", "<sep>", "<none>")
_SPACE = "\u2581"
_CORE = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)


@dataclass(frozen=True)
class Unit:
    """One token of an encoded word: an in-vocabulary piece id or an OOV surface."""

    piece_id: int | None
    surface: str | None = None
    word_start: bool = False
    pieces: tuple[int, ...] = ()  # a whole-word copy unit: the pieces the encoder reads

    @property
    def is_oov(self) -> bool:
        """True for a copy unit (OOV or whole word): it has an extended id, not a piece id."""
        return self.piece_id is None

    def encoder_ids(self, unk_id: int) -> tuple[int, ...]:
        """What the encoder reads for this unit: its piece, its pieces, or ``<unk>``."""
        if self.piece_id is not None:
            return (self.piece_id,)
        return self.pieces or (unk_id,)


@dataclass
class EncodedSource:
    """``<suggestion> <sep> <source>`` as encoder ids, extended ids and the OOV table."""

    input_ids: list[int]
    ext_ids: list[int]
    oov_words: list[str] = field(default_factory=list)
    oov_word_start: list[bool] = field(default_factory=list)

    def oov_index(self) -> dict[str, int]:
        return {word: i for i, word in enumerate(self.oov_words)}


class ParaphraseTokenizer:
    """SentencePiece pieces + specials + per-example extended ids for OOV copy units."""

    def __init__(self, spm_model: str | Path | bytes, lowercase: bool = True,
                 max_len: int = 64, copy_word_pieces: int | None = None) -> None:
        if copy_word_pieces is not None and copy_word_pieces < 1:
            raise ValueError(f"copy_word_pieces must be >= 1 or None, not {copy_word_pieces}")
        self.sp = spm.SentencePieceProcessor()
        if isinstance(spm_model, bytes):
            self.sp.LoadFromSerializedProto(spm_model)
            self.model_proto = spm_model
        else:
            path = Path(spm_model)
            if not path.is_file():
                raise FileNotFoundError(f"SentencePiece model not found: {path}")
            self.model_proto = path.read_bytes()
            self.sp.LoadFromSerializedProto(self.model_proto)
        self.lowercase = lowercase
        self.max_len = max_len
        self.copy_word_pieces = copy_word_pieces
        self.spm_vocab_size = self.sp.get_piece_size()
        base = self.spm_vocab_size
        self.pad_id, self.bos_id, self.eos_id, self.sep_id, self.none_id = (
            base + i for i in range(len(SPECIALS)))
        self.vocab_size = base + len(SPECIALS)
        self.unk_id = self.sp.unk_id()
        self._unknown = {i for i in range(base) if self.sp.is_unknown(i) or self.sp.is_byte(i)}
        self._cache: dict[str, tuple[Unit, ...]] = {}
        self._forced_cache: dict[str, tuple[Unit, ...]] = {}

    # ----------------------------------------------------------------------------- words
    def words(self, text: str) -> list[str]:
        """Whitespace words of ``text`` (lower-cased when configured)."""
        return (text.lower() if self.lowercase else text).split()

    @staticmethod
    def core(word: str) -> str:
        """The word without leading and trailing punctuation (the word itself if all punct)."""
        core = _CORE.match(word).group(2)
        return core or word

    def is_oov(self, word: str) -> bool:
        """True when the word's SentencePiece encoding has ``<unk>`` or byte pieces."""
        return any(u.is_oov and not u.pieces for u in self.encode_word(word))

    def encode_word(self, word: str, force_oov: bool = False) -> tuple[Unit, ...]:
        """Units of one word (see the module docstring); ``force_oov`` makes its core OOV."""
        cache = self._forced_cache if force_oov else self._cache
        units = cache.get(word)
        if units is None:
            units = self._encode_word(word, force_oov)
            if len(cache) < 1_000_000:
                cache[word] = units
        return units

    def _encode_word(self, word: str, force_oov: bool) -> tuple[Unit, ...]:
        proto = self.sp.encode(word, return_type="proto")
        pieces = [(p.id, p.begin, p.end) for p in proto.pieces]
        raw = word.encode("utf-8")
        unknown = [(b, e) for i, b, e in pieces if i in self._unknown]
        lead, core, _ = _CORE.match(word).groups()
        if not core:
            lead, core = "", word
        core_begin = len(lead.encode("utf-8"))
        core_end = core_begin + len(core.encode("utf-8"))
        whole = False
        if not unknown and not force_oov:
            if not self._copied_whole(pieces, core_begin, core_end):
                return tuple(Unit(i) for i, _, _ in pieces)
            whole = True
        begin, end = core_begin, core_end
        if unknown:
            begin = min(begin, min(b for b, _ in unknown))
            end = max(end, max(e for _, e in unknown))
        changed = True
        while changed:  # widen the span to whole pieces overlapping it
            changed = False
            for _, b, e in pieces:
                if b < end and e > begin and (b < begin or e > end):
                    begin, end, changed = min(begin, b), max(end, e), True
        units: list[Unit] = []
        inside: list[int] = []
        for i, b, e in pieces:
            # zero-width pieces at the span's end belong to the next character
            if begin <= b and e <= end and not b == e == end:
                inside.append(i)
                if not any(u.is_oov for u in units):
                    surface = raw[begin:end].decode("utf-8", errors="replace")
                    units.append(Unit(None, surface, word_start=begin == 0))
                continue
            units.append(Unit(i))
        if whole:
            units = [Unit(None, u.surface, u.word_start, tuple(inside)) if u.is_oov else u
                     for u in units]
        return tuple(units)

    def _copied_whole(self, pieces: list[tuple[int, int, int]], begin: int, end: int) -> bool:
        """True when ``copy_word_pieces`` is set and the core ``[begin, end)`` has at least
        that many pieces (a piece that is only the word-boundary mark does not count)."""
        if self.copy_word_pieces is None or begin == end:
            return False
        n = sum(1 for i, b, e in pieces if b < end and e > begin
                and self.sp.id_to_piece(i) != _SPACE)
        return n >= self.copy_word_pieces

    # ------------------------------------------------------------------------- encoding
    def encode_source(self, suggestion: str | None, source: str,
                      force: Iterable[str] = ()) -> EncodedSource:
        """Encode ``<suggestion> <sep> <source>``; ``None``/empty suggestion is ``<none>``.

        ``force`` holds word cores to treat as OOV (the training-time copy exercise).
        The source is truncated so the whole input has at most ``max_len`` ids.
        """
        forced = set(force)
        input_ids: list[int] = []
        ext_ids: list[int] = []
        oov: dict[str, int] = {}
        starts: list[bool] = []

        def add_words(words: list[str], limit: int) -> None:
            for word in words:
                units = self.encode_word(word, force_oov=self.core(word) in forced)
                if len(input_ids) + sum(len(u.encoder_ids(self.unk_id)) for u in units) > limit:
                    return
                for unit in units:
                    if unit.is_oov:
                        k = oov.setdefault(unit.surface, len(oov))
                        if k == len(starts):
                            starts.append(unit.word_start)
                        for piece in unit.encoder_ids(self.unk_id):
                            input_ids.append(piece)
                            ext_ids.append(self.vocab_size + k)
                    else:
                        input_ids.append(unit.piece_id)
                        ext_ids.append(unit.piece_id)

        suggestion_words = self.words(suggestion) if suggestion else []
        if suggestion_words:
            add_words(suggestion_words, max(1, self.max_len // 2))
        if not input_ids:
            input_ids.append(self.none_id)
            ext_ids.append(self.none_id)
        input_ids.append(self.sep_id)
        ext_ids.append(self.sep_id)
        add_words(self.words(source), self.max_len)
        return EncodedSource(input_ids, ext_ids, list(oov), starts)

    def encode_target(self, target: str, source: EncodedSource,
                      force: Iterable[str] = (), max_len: int | None = None) -> list[int]:
        """Target ids (extended ids for the source's OOV units) followed by ``</s>``."""
        forced = set(force)
        table = source.oov_index()
        ids: list[int] = []
        for word in self.words(target):
            for unit in self.encode_word(word, force_oov=self.core(word) in forced):
                if not unit.is_oov:
                    ids.append(unit.piece_id)
                elif unit.surface in table:
                    ids.append(self.vocab_size + table[unit.surface])
                elif unit.pieces:  # a whole-word unit in the target only: its pieces
                    ids.extend(unit.pieces)
                else:  # OOV in the target only: its raw pieces (<unk> / bytes)
                    ids.extend(self._raw_pieces(unit.surface, unit.word_start))
        limit = (max_len or self.max_len) - 1
        return ids[:limit] + [self.eos_id]

    def _raw_pieces(self, surface: str, word_start: bool) -> list[int]:
        ids = self.sp.encode(surface)
        if not word_start and ids and self.sp.id_to_piece(ids[0]) == _SPACE:
            ids = ids[1:]
        return ids

    # ------------------------------------------------------------------------- decoding
    def decode(self, ids: Iterable[int], oov_words: list[str] | None = None,
               oov_word_start: list[bool] | None = None) -> str:
        """Text of generated ids: pieces via SentencePiece, extended ids as their surface."""
        oov_words = oov_words or []
        oov_word_start = oov_word_start or [True] * len(oov_words)
        parts: list[str] = []
        run: list[int] = []

        def flush() -> None:
            if run:
                text = self.sp.decode(run)
                space = self.sp.id_to_piece(run[0]).startswith(_SPACE)
                parts.append((" " if space else "") + text)
                run.clear()

        for i in ids:
            i = int(i)
            if i == self.eos_id:
                break
            if i < self.spm_vocab_size:
                run.append(i)
            elif i >= self.vocab_size and i - self.vocab_size < len(oov_words):
                flush()
                k = i - self.vocab_size
                parts.append((" " if oov_word_start[k] else "") + oov_words[k])
        flush()
        return " ".join("".join(parts).split())

    def generation_blocklist(self) -> list[int]:
        """Ids never generated: specials other than ``</s>``, ``<unk>`` and control pieces."""
        blocked = [self.pad_id, self.bos_id, self.sep_id, self.none_id]
        blocked += [i for i in range(self.spm_vocab_size)
                    if self.sp.is_unknown(i) or self.sp.is_control(i)]
        return sorted(set(blocked))
