"""Synthetic embedding vectors for the scale benchmarks (no model): random unit vectors, or
vectors shaped like the bundled embedder's on real chunks.

Random unit vectors in 384 dimensions have no structure at all: every vector is nearly
orthogonal to every other, which is the hardest case for an HNSW graph. Inserting them, Chroma's
rate falls with the collection's size (1,110 windows/s at 50K, 449 at 250K in one run) and a
query finds under a tenth of its true ten nearest; neither happens with real embeddings.

`Clustered` gives each window a common direction (real sentence embeddings share one), its
paper's field (100 fields), its paper, its section (6 per paper) and noise of varying weight.
The weights were set so that over 3,937 windows (45 papers) the mean pairwise cosine, the mean
cosine to the nearest and to the tenth nearest window, and the norm of the mean vector are close
to those of the demo index's 3,937 real MiniLM window vectors:

    real (demo index)   0.172  0.757  0.581  0.415
    Clustered           0.177  0.787  0.587  0.421
    random              0.000  0.183  0.143  0.015

Every vector is a function of (seed, paper, position in the paper, noise seed), so a benchmark
can rebuild any of them without keeping them.
"""

from __future__ import annotations

import numpy as np

DIM = 384


def normalise(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def random_unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    return normalise(rng.standard_normal((n, dim))).astype(np.float32)


class Clustered:
    COMMON, FIELD, PAPER, SECTION = 0.45, 0.3, 0.4, 0.55
    NOISE = (0.1, 1.2)  # each window's noise weight, uniform in this range
    FIELDS, SECTIONS = 100, 6

    def __init__(self, seed: int = 0, dim: int = DIM):
        rng = np.random.default_rng(seed)
        self.seed, self.dim = seed, dim
        self.common = normalise(rng.standard_normal(dim))
        self.fields = normalise(rng.standard_normal((self.FIELDS, dim)))
        self._papers: dict[int, np.ndarray] = {}  # paper -> its base vector and section vectors

    def _paper(self, paper: int) -> np.ndarray:
        """Row 0: the paper's common + field + paper part; rows 1..6: its section directions."""
        got = self._papers.get(paper)
        if got is None:
            rng = np.random.default_rng([self.seed, paper])
            field = self.fields[int(rng.integers(0, self.FIELDS))]
            own = normalise(rng.standard_normal(self.dim))
            base = self.COMMON * self.common + self.FIELD * field + self.PAPER * own
            sections = self.SECTION * normalise(rng.standard_normal((self.SECTIONS, self.dim)))
            got = np.vstack([base, sections])
            self._papers[paper] = got
        return got

    def window(self, paper: int, position: float, noise_seed: int) -> np.ndarray:
        """A window of `paper` at `position` in [0, 1) of its text (which fixes its section)."""
        parts = self._paper(paper)
        section = 1 + min(self.SECTIONS - 1, int(position * self.SECTIONS))
        rng = np.random.default_rng([self.seed, paper, noise_seed])
        noise = rng.uniform(*self.NOISE) * normalise(rng.standard_normal(self.dim))
        return normalise(parts[0] + parts[section] + noise).astype(np.float32)

    def windows(self, papers: np.ndarray, positions: np.ndarray, noise_seeds: np.ndarray) -> np.ndarray:
        return np.stack([self.window(int(p), float(x), int(s)) for p, x, s in zip(papers, positions, noise_seeds)])
