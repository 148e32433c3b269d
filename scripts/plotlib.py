"""What every plot_*.py script shares: matplotlib's pyplot with the
non-interactive backend, installed with pip first if it is missing (the CI
image and a fresh machine do not have it)."""
import subprocess
import sys


def load_matplotlib():
    """pyplot, or None (with a note on stderr) when it cannot be had."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("installing matplotlib...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "matplotlib"], check=False)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib unavailable: no chart", file=sys.stderr)
        return None
    return plt
