"""A minimal, independent OSC-over-UDP client (hand-encoded, no liblo) for benchmark scripts."""
import socket
import struct
import time


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (4 - len(data) % 4)


def encode(address: str, *args) -> bytes:
    tags, payload = ",", b""
    for arg in args:
        if isinstance(arg, bool):
            tags += "T" if arg else "F"
        elif isinstance(arg, int):
            tags, payload = tags + "i", payload + struct.pack(">i", arg)
        elif isinstance(arg, float):
            tags, payload = tags + "f", payload + struct.pack(">f", arg)
        else:
            tags, payload = tags + "s", payload + _pad(str(arg).encode())
    return _pad(address.encode()) + _pad(tags.encode()) + payload


def decode(data: bytes):
    end = data.index(b"\0")
    address = data[:end].decode()
    offset = (end + 4) & ~3
    end = data.index(b"\0", offset)
    tags = data[offset + 1:end].decode()
    offset = (end + 4) & ~3
    args = []
    for tag in tags:
        if tag == "i":
            args.append(struct.unpack(">i", data[offset:offset + 4])[0]); offset += 4
        elif tag == "f":
            args.append(struct.unpack(">f", data[offset:offset + 4])[0]); offset += 4
        elif tag == "h":
            args.append(struct.unpack(">q", data[offset:offset + 8])[0]); offset += 8
        elif tag == "d":
            args.append(struct.unpack(">d", data[offset:offset + 8])[0]); offset += 8
        elif tag == "s":
            end = data.index(b"\0", offset)
            args.append(data[offset:end].decode()); offset = (end + 4) & ~3
        elif tag in "TF":
            args.append(tag == "T")
    return address, args


class Client:
    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.target = (host, port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", 0))

    def send(self, address: str, *args):
        self.sock.sendto(encode(address, *args), self.target)

    def receive(self, timeout: float):
        self.sock.settimeout(timeout)
        try:
            return decode(self.sock.recv(65536))
        except socket.timeout:
            return None

    def request(self, address: str, *args, reply: str = None, timeout: float = 5.0):
        """Sends and waits for the first reply on `reply` (default: the same address)."""
        self.send(address, *args)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if message and message[0] == (reply or address):
                return message[1]
        raise TimeoutError(f"no {reply or address} reply")

    def set_and_wait_applied(self, address: str, value, timeout: float = 5.0):
        self.send(address, value)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if message and message[0] == "/state" and message[1][0] == address and message[1][1] in ("applied", "failed"):
                if message[1][1] == "failed":
                    raise RuntimeError(f"{address} failed: {message[1]}")
                return
        raise TimeoutError(f"{address} not applied")
