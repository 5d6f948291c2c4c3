"""What the benchmarks share: the CPU they report their figures on."""

import platform


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, else platform.processor(), else
    "unknown CPU"."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
