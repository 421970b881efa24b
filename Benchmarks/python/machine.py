"""The machine description of the results, as the C harness writes it:
CPU, CPU count, memory, kernel, OS and the file system of the data."""
import os
import platform

_FILE_SYSTEMS = {"ext4": "ext4", "xfs": "xfs", "btrfs": "btrfs", "overlay": "overlayfs", "zfs": "zfs",
                 "tmpfs": "tmpfs (fsync is free: figures are not durable-write figures)"}


def _field(path: str, key: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith(key):
                    sep = min(i for i in (line.find(":"), line.find("=")) if i >= 0)
                    return line[sep + 1:].strip().strip('"')
    except (OSError, ValueError):
        pass
    return ""


def _file_system(directory: str) -> str:
    """The type of the mount holding `directory`, from /proc/mounts."""
    best, kind = "", ""
    path = os.path.realpath(directory)
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 2 and (path == parts[1] or path.startswith(parts[1].rstrip("/") + "/")) \
                        and len(parts[1]) >= len(best):
                    best, kind = parts[1], parts[2]
    except OSError:
        return "unknown file system"
    return _FILE_SYSTEMS.get(kind, "other file system")


def describe(directory: str) -> str:
    mem = _field("/proc/meminfo", "MemTotal")
    mem = f"{float(mem.split()[0]) / 1048576:.1f} GiB RAM" if mem else "unknown RAM"
    return ", ".join((_field("/proc/cpuinfo", "model name") or "unknown CPU", f"{os.cpu_count()} CPUs", mem,
                      f"Linux {platform.release()}", _field("/etc/os-release", "PRETTY_NAME") or "unknown OS",
                      _file_system(directory)))


if __name__ == "__main__":
    import sys
    print(describe(sys.argv[1] if len(sys.argv) > 1 else "."))
