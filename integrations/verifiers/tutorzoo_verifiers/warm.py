"""Prepare, once and with the network, what the ``null`` chat harness's subprocess runtime installs on first use.

verifiers runs the tutor's chat loop as a PEP 723 script under ``uv`` and syncs its dependencies the first time
it starts, resolving them against the index again on every later start. ``make verifiers-venv`` runs
``python -m tutorzoo_verifiers.warm``, which prepares the script environment (under ``$HOME/.cache/verifiers`` and
``$HOME/.cache/uv``) and locks the script, so that an eval (and the tests) start it with no network.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import subprocess
import time


def _script_path() -> str:
    from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
    from verifiers.v1.runtimes.subprocess import SubprocessRuntime

    return f"{SubprocessRuntime.scripts_dir}/{hashlib.sha256(CHAT_PROGRAM_SOURCE.encode()).hexdigest()}.py"


async def _prepare() -> list[str]:
    from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
    from verifiers.v1.runtimes.subprocess import SubprocessConfig, SubprocessRuntime

    runtime = SubprocessRuntime(SubprocessConfig(), name="tutorzoo-warm")
    await runtime.start()
    try:
        return await runtime.prepare_uv_script(CHAT_PROGRAM_SOURCE, {})
    finally:
        await runtime.stop()


def main() -> None:
    t0 = time.time()
    argv = asyncio.run(_prepare())
    uv = shutil.which("uv")
    if uv is None:
        raise SystemExit("uv is not on PATH: install tutorzoo-verifiers (it depends on uv) and run this with the "
                         "venv's bin/ first on PATH")
    # a locked script syncs from the lock alone; an unlocked one asks the index each time
    subprocess.run([uv, "lock", "--script", _script_path(), "-q", "--no-config"], check=True)
    print(f"chat harness ready in {time.time() - t0:.1f} s: {' '.join(argv)}")


if __name__ == "__main__":
    main()
