"""Reader libraries: what each library the number module builds on costs, each in a fresh process.

The number module (:mod:`tutorzoo.envs.reading.numbers`) imports text2num at load, latex2sympy2_extended (sympy) on
the first LaTeX number its digit forms miss, and pint not at all (its unit factors are checked against pint by the
tests). Prints, each the median of ``--runs`` fresh interpreters: the import of the number module, of text2num, of
latex2sympy2_extended, and pint's import with its registry built (with and without pint's disk cache); then, in this
process, microseconds per call of :func:`~tutorzoo.envs.reading.numbers.word_number` (text2num) beside the sum of
the words it replaced, and of :func:`~tutorzoo.envs.reading.numbers.latex_value` on a miss of its cache.

    python benchmarks/reader_libraries.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

SNIPPETS = {
    "tutorzoo.envs.reading.numbers (with tutorzoo.envs)": "import tutorzoo.envs.reading.numbers",
    "text2num": "import text_to_num",
    "latex2sympy2_extended (sympy)": "import latex2sympy2_extended",
    "pint + registry, disk cache": ("import pint\nfrom fractions import Fraction\n"
                                    "pint.UnitRegistry(non_int_type=Fraction, cache_folder=':auto:')"),
    "pint + registry, no cache": ("import pint\nfrom fractions import Fraction\n"
                                  "pint.UnitRegistry(non_int_type=Fraction)"),
}


def fresh_seconds(snippet: str) -> float:
    """Seconds ``snippet`` takes in a fresh interpreter (the interpreter's own start not counted)."""
    code = f"import time\nt = time.perf_counter()\n{snippet}\nprint(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def per_call_us(fn, args: list, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for a in args:
            fn(a)
    return (time.perf_counter() - start) / (repeat * len(args)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters per import (default 5)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be >= 1, got {args.runs}")
    for name, snippet in SNIPPETS.items():
        times = [fresh_seconds(snippet) for _ in range(args.runs)]
        print(f"import {name:32} {statistics.median(times):6.3f} s  (median of {args.runs})")
    from tutorzoo.envs.reading import numbers

    phrases = ["three hundred and five", "thirty-two", "two thousand and forty-two", "a hundred and five", "nineteen"]
    matches = [numbers.NUMBER_PHRASE.fullmatch(p) for p in phrases]
    print(f"word_number (text2num)         {per_call_us(numbers.word_number, matches, 2000):6.2f} us/call")
    print(f"sum of the words               {per_call_us(numbers.sum_of_words, phrases, 2000):6.2f} us/call")
    latex = [r"\frac{-3}{4}", r"3\times 10^{2}", r"2^{-1}", r"\sqrt{4}", r"\frac{0.5}{2}"]
    numbers.latex_value(latex[0])  # (the library's import is counted above)
    start = time.perf_counter()
    for text in latex:
        numbers.latex_value.cache_clear()
        numbers.latex_value(text)
    print(f"latex_value, cache miss        {(time.perf_counter() - start) / len(latex) * 1e6:6.0f} us/call")


if __name__ == "__main__":
    main()
