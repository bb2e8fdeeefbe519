"""What this machine offers a run: the cores this process may use and the memory available now."""

import os

__all__ = ["available_memory_bytes", "usable_cores"]


def usable_cores():
    """CPU cores this process may run on (its affinity where the system reports it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def available_memory_bytes():
    """Memory available to this process now, bytes (None when the platform does not say)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
