#!/usr/bin/env python3
"""Minimizes tests/fuzz/corpus/<target>/ with what a campaign grew (docs/reliability.md).

`tests/fuzz/merge_corpus.py TARGET` runs build/fuzz/bin/fuzz_TARGET -set_cover_merge=1 over the
committed corpus and build/fuzz/corpus/TARGET into a scratch directory: the greedy set cover of
their features, smaller than -merge=1's set for the same features (ttgir: 618 inputs instead of
980). The committed corpus then keeps its seed-* and regression-* inputs as they are and holds
the cover's other inputs, named by their SHA-1; the SHA-1-named inputs outside the cover go.
Run from the repository root, then check the replay (ctest -R fuzz_replay).
"""
import hashlib
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    target = sys.argv[1]
    corpus = os.path.join(ROOT, "tests", "fuzz", "corpus", target)
    grown = os.path.join(ROOT, "build", "fuzz", "corpus", target)
    fuzzer = os.path.join(ROOT, "build", "fuzz", "bin", "fuzz_" + target)
    with tempfile.TemporaryDirectory() as cover:
        subprocess.run([fuzzer, "-set_cover_merge=1", "-timeout=10", "-rss_limit_mb=2048", cover,
                        corpus] + ([grown] if os.path.isdir(grown) else []),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kept, named = set(), {}
        for name in os.listdir(corpus):
            data = read(os.path.join(corpus, name))
            if name.startswith(("seed-", "regression-")):
                kept.add(hashlib.sha1(data).hexdigest())
            else:
                named[name] = data
        want = {}
        for name in os.listdir(cover):
            data = read(os.path.join(cover, name))
            digest = hashlib.sha1(data).hexdigest()
            if digest not in kept:
                want[digest] = data
    for name in named:
        if name not in want:
            os.remove(os.path.join(corpus, name))
    for digest, data in want.items():
        if digest not in named:
            with open(os.path.join(corpus, digest), "wb") as f:
                f.write(data)
    print(f"{target}: {len(os.listdir(corpus))} inputs, {len(kept)} seed/regression, "
          f"{len(want)} from the cover ({len(set(want) - set(named))} new, "
          f"{len(set(named) - set(want))} dropped)")


if __name__ == "__main__":
    main()
