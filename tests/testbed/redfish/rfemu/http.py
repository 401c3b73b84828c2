"""A small HTTP/1.1 server core on asyncio streams (keep-alive, Content-Length and chunked
request bodies, Expect: 100-continue). One instance serves many listeners; the handler decides
per request. Standard library only, so it runs on Debian's python3 without pip."""

import asyncio
import ssl

REASONS = {
    100: "Continue", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content",
    301: "Moved Permanently", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 409: "Conflict", 411: "Length Required",
    412: "Precondition Failed", 413: "Payload Too Large", 415: "Unsupported Media Type",
    428: "Precondition Required", 500: "Internal Server Error", 501: "Not Implemented",
    503: "Service Unavailable",
}

MAX_HEADER_BYTES = 64 * 1024


class Request:
    __slots__ = ("method", "target", "path", "query", "headers", "body", "peer")

    def __init__(self, method, target, headers, body, peer):
        self.method = method
        self.target = target
        path, _, query = target.partition("?")
        self.path = path
        self.query = query
        self.headers = headers  # lower-case names
        self.body = body
        self.peer = peer


class Response:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status, body=b"", headers=None):
        self.status = status
        self.body = body
        self.headers = headers if headers is not None else []


# Returned by a handler to close the connection without any answer (fault injection).
DROP = object()


class HttpError(Exception):
    def __init__(self, status):
        super().__init__(status)
        self.status = status


async def _read_body(reader, writer, headers, max_body):
    te = headers.get("transfer-encoding", "").lower()
    if "chunked" in te:
        chunks = []
        total = 0
        while True:
            line = await reader.readline()
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            total += size
            if total > max_body:
                raise HttpError(413)
            chunks.append(await reader.readexactly(size))
            await reader.readline()
    n = headers.get("content-length")
    if n is None:
        return b""
    try:
        n = int(n)
    except ValueError:
        raise HttpError(400)
    if n > max_body:
        raise HttpError(413)
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    return await reader.readexactly(n) if n else b""


def encode_response(resp, keep_alive):
    head = ["HTTP/1.1 %d %s" % (resp.status, REASONS.get(resp.status, "Status"))]
    for k, v in resp.headers:
        head.append("%s: %s" % (k, v))
    head.append("Content-Length: %d" % len(resp.body))
    head.append("Connection: keep-alive" if keep_alive else "Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + resp.body


async def serve_connection(reader, writer, handler, max_body, conns=None):
    """Reads requests from one connection and answers them with `await handler(request)`."""
    peer = writer.get_extra_info("peername")
    if conns is not None:
        conns.add(writer)
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                continue
            try:
                method, target, version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
            except ValueError:
                writer.write(encode_response(Response(400), False))
                return
            headers = {}
            size = 0
            while True:
                h = await reader.readline()
                size += len(h)
                if h in (b"\r\n", b"\n", b"") or size > MAX_HEADER_BYTES:
                    break
                k, sep, v = h.decode("latin-1").partition(":")
                if sep:
                    headers[k.strip().lower()] = v.strip()
            conn_hdr = headers.get("connection", "").lower()
            keep_alive = (version == "HTTP/1.1" and "close" not in conn_hdr) or \
                (version == "HTTP/1.0" and "keep-alive" in conn_hdr)
            try:
                body = await _read_body(reader, writer, headers, max_body)
            except HttpError as e:
                writer.write(encode_response(Response(e.status), False))
                await writer.drain()
                return
            resp = await handler(Request(method, target, headers, body, peer))
            if resp is DROP:
                writer.transport.abort()
                return
            if method == "HEAD":
                data = encode_response(resp, keep_alive)
                data = data[: len(data) - len(resp.body)]
            else:
                data = encode_response(resp, keep_alive)
            writer.write(data)
            await writer.drain()
            if not keep_alive:
                return
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, asyncio.LimitOverrunError,
            ValueError, OSError):
        return
    finally:
        if conns is not None:
            conns.discard(writer)
        try:
            writer.close()
        except Exception:  # the transport may already be gone
            pass
