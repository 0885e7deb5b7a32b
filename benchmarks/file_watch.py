"""The moment a file appears under its name (benchmarks/ibmpg/run and benchmarks/dist/run): the
`file` column, process start to the voltages file closed and renamed into place, beside the wall
clock to the process's exit. Linux inotify through libc; standard library only."""
import ctypes
import ctypes.util
import os
import select
import struct
import threading
import time


class FileWatch:
    """When a file appears under its name in its folder (created, or renamed into place as pgsim
    commits an output), by Linux inotify through libc; `seconds` stays None where inotify is missing.
    The watching thread stamps the event as it reads it: the figure errs late, never early."""
    IN_CLOSE_WRITE, IN_MOVED_TO = 0x8, 0x80
    HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)

    def __init__(self, path, start):
        self.name, self.start, self.seconds = path.name.encode(), start, None
        self.fd = -1
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
            self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if self.fd >= 0 and libc.inotify_add_watch(self.fd, str(path.parent).encode(),
                                                       self.IN_MOVED_TO | self.IN_CLOSE_WRITE) < 0:
                os.close(self.fd)
                self.fd = -1
        except (OSError, AttributeError):
            self.fd = -1
        self.stop_r, self.stop_w = os.pipe()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        while self.fd >= 0:
            ready, _, _ = select.select([self.fd, self.stop_r], [], [])
            if self.fd in ready:
                now = time.monotonic()
                names = self._names(os.read(self.fd, 65536))  # read every time: unread events keep select ready
                if self.seconds is None and self.name in names:
                    self.seconds = now - self.start
            if self.stop_r in ready:
                return

    def _names(self, data):
        """The names of the inotify events read into `data`, in order."""
        offset = 0
        while offset + self.HEADER.size <= len(data):
            begin = offset + self.HEADER.size
            end = begin + self.HEADER.unpack_from(data, offset)[3]
            yield data[begin:end].rstrip(b"\0")
            offset = end

    def close(self):
        os.write(self.stop_w, b"x")
        self.thread.join()
        for fd in (self.fd, self.stop_r, self.stop_w):
            if fd >= 0:
                os.close(fd)
