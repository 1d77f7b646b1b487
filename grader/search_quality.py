"""Search quality, as a tiny vector index: the pitfalls of *Common mistakes › 4. Search quality* and their fixes.

The vectors are deterministic hashed bags of words (or of character trigrams), not a real
embedding model: the same text always gives the same vector, so lessons and tests can show a
threshold that does not carry between two "models", a dimension mismatch or one article
crowding out the rest without downloading anything. Real models behave the same way in
kind; their numbers differ.

Also the checks ``check-server`` runs on a search tool's answer: fragments short, starting
and ending on a word boundary, at most two from one source (*Common mistakes › Pre-launch
checklist*).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

WORD = re.compile(r"[^\W_]+")

# The article's own choices: fragments of about 900 characters, at most two per article, and at
# most 30 characters dropped to reach the first whole word. check-server flags fragments over 1,000.
FRAGMENT_CHARS = 900
FRAGMENT_LIMIT = 1_000
PER_SOURCE = 2
MAX_SKIP = 30
ELLIPSIS = "…"

# Where check-server looks for fragments in a tool's structuredContent: a list of objects with a
# field of one of these names (the text) and, for the per-source count, one naming the source.
FRAGMENT_FIELDS = ("fragment", "snippet", "excerpt", "chunk")
SOURCE_FIELDS = ("slug", "source", "url", "article", "article_id", "document", "doc_id", "title")


class EmbeddingUnavailable(ConnectionError):
    """The embedding service does not answer (the article's "Connection refused" on the model's port)."""


class DimensionMismatch(ValueError):
    """Two vectors of different lengths: the index and the query were embedded by different models."""


# Words too common to say what a text is about; real models learn this, the toy one is told.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "with",
        "and",
        "or",
        "is",
        "are",
        "be",
        "by",
        "as",
        "it",
        "its",
        "this",
        "that",
        "your",
        "you",
        "not",
        "no",
        "per",
        "how",
        "what",
        "when",
    ]
)


def words(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]


def trigrams(text: str) -> list[str]:
    squeezed = " " + " ".join(words(text)) + " "
    return [squeezed[i : i + 3] for i in range(len(squeezed) - 2)]


@dataclass(frozen=True)
class Embedder:
    """A deterministic stand-in for an embedding model: features hashed into ``dims`` buckets.

    ``unit`` is "word" (bag of words) or "trigram" (character trigrams, whose scores run higher
    for any two texts, as a different real model's scale would). ``available=False`` plays the
    model's service being down.
    """

    name: str
    dims: int = 256
    unit: str = "word"
    available: bool = True

    def features(self, text: str) -> list[str]:
        return trigrams(text) if self.unit == "trigram" else words(text)

    def embed(self, text: str) -> tuple[float, ...]:
        if not self.available:
            raise EmbeddingUnavailable(f"Connection refused: the embedding model {self.name!r} is not running")
        vector = [0.0] * self.dims
        for feature, count in Counter(self.features(text)).items():
            digest = hashlib.blake2b(f"{self.name}:{feature}".encode(), digest_size=8).digest()
            vector[int.from_bytes(digest, "big") % self.dims] += count
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return tuple(x / norm for x in vector)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise DimensionMismatch(f"different vector dimensions: {len(a)} and {len(b)}")
    return sum(x * y for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class Chunk:
    """A piece of an article as the vector store keeps it: it knows its article, not whether it is still published."""

    slug: str
    text: str
    position: int = 0


def split_chunks(slug: str, text: str, *, size: int = 120, overlap: int = 30) -> list[Chunk]:
    """Cut ``text`` every ``size - overlap`` characters with no regard for words, as a naive indexer does."""
    step = max(1, size - overlap)
    return [Chunk(slug, text[i : i + size], n) for n, i in enumerate(range(0, max(1, len(text) - overlap), step))]


def clean_fragment(text: str, *, limit: int = FRAGMENT_CHARS, max_skip: int = MAX_SKIP) -> str:
    """The article's fix for fragments that start or end inside a word (*Common mistakes › 4.4*).

    A fragment that starts with a lower-case letter loses everything up to the first space (at
    most ``max_skip`` characters); a fragment that is cut (or longer than ``limit``) ends at the
    last whole word, followed by an ellipsis.
    """
    if text[:1].islower():  # a fragment that starts with a space starts on a word boundary
        space = text.find(" ", 0, max_skip + 1)
        if space != -1:
            text = text[space + 1 :]
    text = text.strip()
    if len(text) > limit:
        text = text[:limit]
        cut_inside_word = True
    else:
        cut_inside_word = bool(text) and text[-1].isalnum()
    if cut_inside_word:
        space = text.rfind(" ")
        text = (text[:space] if space > 0 else text).rstrip(" ,;:-") + ELLIPSIS
    return text


@dataclass(frozen=True)
class Hit:
    slug: str
    score: float
    text: str


def cap_per_source(hits: Iterable[Hit], cap: int = PER_SOURCE) -> list[Hit]:
    """Keep at most ``cap`` hits of each source, in the order given (best first)."""
    seen: Counter[str] = Counter()
    kept = []
    for hit in hits:
        if seen[hit.slug] < cap:
            seen[hit.slug] += 1
            kept.append(hit)
    return kept


@dataclass
class Index:
    """Chunks and their vectors, embedded once by ``embedder`` (the index's model)."""

    embedder: Embedder
    chunks: list[Chunk]
    vectors: list[tuple[float, ...]] = field(init=False)

    def __post_init__(self) -> None:
        self.vectors = [self.embedder.embed(c.text) for c in self.chunks]

    def search(
        self,
        query: str,
        *,
        k: int = 5,
        query_embedder: Embedder | None = None,
        published: Collection[str] | None = None,
        threshold: float | None = None,
        per_source: int | None = None,
        candidates: int = 50,
    ) -> list[Hit]:
        """The top ``k`` chunks for ``query``.

        ``published``: the slugs the articles table says are published now; given, the query keeps
        only their chunks, whatever the store still holds (*Common mistakes › 2.2*);
        ``per_source`` caps hits per article after taking the ``candidates`` nearest (*4.3*).
        The query is embedded by ``query_embedder`` (default: the index's model).
        """
        q = (query_embedder or self.embedder).embed(query)
        scored = [
            Hit(c.slug, round(cosine(q, v), 3), c.text)
            for c, v in zip(self.chunks, self.vectors, strict=True)
            if published is None or c.slug in published
        ]
        scored = [h for h in scored if threshold is None or h.score >= threshold]
        scored.sort(key=lambda h: -h.score)
        nearest = scored[:candidates]
        return (cap_per_source(nearest, per_source) if per_source else nearest)[:k]


def search_status(index: Index, query: str, **options: Any) -> dict[str, Any]:
    """A search tool's answer as a status, never an exception (*Common mistakes › 5.1*)."""
    if not query.strip():
        return {"status": "error", "message": "Query is empty."}
    try:
        hits = index.search(query, **options)
    except EmbeddingUnavailable:
        return {"status": "unavailable", "message": "Search is temporarily unavailable. Try again later."}
    except DimensionMismatch as exc:
        return {"status": "error", "message": f"The index and the query were embedded by different models ({exc})."}
    if not hits:
        return {"status": "not_found", "message": "Nothing found for this query."}
    return {
        "status": "ok",
        "fragments": [{"slug": h.slug, "score": h.score, "fragment": clean_fragment(h.text)} for h in hits],
    }


# --- what check-server looks at in a search tool's answer --------------------------------------------------


def fragments_in(structured: Any) -> list[tuple[str | None, str]]:
    """(source, text) of each fragment in a structuredContent: the first list of objects with a fragment field."""
    if not isinstance(structured, Mapping):
        return []
    for value in structured.values():
        if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
            text_key = next((k for k in FRAGMENT_FIELDS if all(isinstance(item.get(k), str) for item in value)), None)
            if text_key is None:
                continue
            source_key = next((k for k in SOURCE_FIELDS if all(k in item for item in value)), None)
            return [(str(item[source_key]) if source_key else None, item[text_key]) for item in value]
    return []


def starts_inside_word(text: str) -> bool:
    return text[:1].islower()


def ends_inside_word(text: str) -> bool:
    return bool(text) and text[-1].isalnum()


def fragment_problems(
    fragments: Sequence[tuple[str | None, str]], *, limit: int = FRAGMENT_LIMIT, per_source: int = PER_SOURCE
) -> list[str]:
    """What is wrong with these fragments, one phrase each; empty when nothing is."""
    problems = []
    long = [len(t) for _, t in fragments if len(t) > limit]
    if long:
        problems.append(f"{len(long)} fragment(s) over {limit:,} characters (longest {max(long):,})")
    cut_start = [t[:20] for _, t in fragments if starts_inside_word(t)]
    if cut_start:
        problems.append(f"{len(cut_start)} fragment(s) start inside a word (e.g. {cut_start[0]!r}...)")
    cut_end = [t[-20:] for _, t in fragments if ends_inside_word(t)]
    if cut_end:
        problems.append(
            f"{len(cut_end)} fragment(s) end without a full stop or ellipsis, likely inside a word (e.g. ...{cut_end[0]!r})"
        )
    counts = Counter(source for source, _ in fragments if source is not None)
    crowded = {s: n for s, n in counts.items() if n > per_source}
    if crowded:
        shown = ", ".join(f"{s} x{n}" for s, n in crowded.items())
        problems.append(f"more than {per_source} fragments from one source ({shown})")
    return problems
