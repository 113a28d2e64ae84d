"""Traces of `mds --otlp-endpoint` read by OpenTelemetry's own OTLP messages.

Two commands, run by scripts/otlp-check.sh:

  otlp_check.py receive DIR [--discard]
                              an OTLP/HTTP receiver on a free loopback port
                              (written to DIR/port): each `POST /v1/traces`
                              body is saved in DIR as N.json (with
                              --discard, thrown away: bench/trace-cost.sh);
                              needs only the standard library
  otlp_check.py check DIR --trace HEX --parent HEX --key KEY
                              decodes every body as an
                              ExportTraceServiceRequest (the
                              `opentelemetry-proto` package, through
                              google.protobuf's JSON parser, strict: an
                              unknown field fails) and checks the spans

OTLP/JSON writes trace and span ids in hex where protobuf's JSON mapping
has base64 (the OTLP specification's one deviation); as OpenTelemetry's
own receivers do, the ids are read as hex before the message is parsed.
"""

from __future__ import annotations

import argparse
import base64
import json
import pathlib
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def receive(out: pathlib.Path, discard: bool) -> None:
    count = 0

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            nonlocal count
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if self.path != "/v1/traces":
                self.send_response(404)
            elif self.headers.get("Content-Type") != "application/json":
                self.send_response(415)
            else:
                count += 1
                if not discard:
                    (out / f"{count}.json").write_bytes(body)
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    (out / "port.tmp").write_text(str(server.server_address[1]))
    (out / "port.tmp").rename(out / "port")
    server.serve_forever()


def hex_ids_to_base64(value: object) -> object:
    """OTLP/JSON's hex ids as protobuf's JSON mapping has bytes (base64)."""
    if isinstance(value, dict):
        return {
            k: (
                base64.b64encode(bytes.fromhex(v)).decode()
                if k in ID_FIELDS and isinstance(v, str)
                else hex_ids_to_base64(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [hex_ids_to_base64(v) for v in value]
    return value


def decode(path: pathlib.Path) -> ExportTraceServiceRequest:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    msg = ExportTraceServiceRequest()
    json_format.Parse(json.dumps(hex_ids_to_base64(json.loads(path.read_bytes()))), msg)
    # And through the binary protobuf encoding, as an OTLP/gRPC or
    # protobuf receiver would hold it.
    again = ExportTraceServiceRequest()
    again.ParseFromString(msg.SerializeToString())
    assert again == msg
    return again


def attrs(span: Span) -> dict[str, object]:
    out: dict[str, object] = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, kind)
    return out


def check(out: pathlib.Path, trace: str, parent: str, key: str) -> None:
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    deadline = time.monotonic() + 30
    while True:
        bodies = sorted(out.glob("*.json"))
        requests = [decode(p) for p in bodies]
        spans = [
            (rs, span)
            for req in requests
            for rs in req.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]
        in_trace = [s for _, s in spans if s.trace_id == bytes.fromhex(trace)]
        ours = [s for s in in_trace if s.kind == Span.SPAN_KIND_SERVER]
        children = [s for s in in_trace if s.kind == Span.SPAN_KIND_CLIENT]
        if len(ours) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    print(f"{len(bodies)} export requests, {len(spans)} spans, {len(ours)} in trace {trace}")
    assert len(ours) == 2, f"the two requests sent with traceparent: {ours}"
    for rs, _ in spans:
        service = {kv.key: kv.value.string_value for kv in rs.resource.attributes}
        assert service.get("service.name") == "mds", service
    by_route = {attrs(s).get("http.route"): s for s in ours}
    history = by_route.get("/v1/companies/{isin}/history")
    article = by_route.get("/v1/news/{slug}")
    assert history is not None and article is not None, by_route.keys()
    for span, status in ((history, 200), (article, 404)):
        a = attrs(span)
        print(f"  {span.name}: {a}")
        assert span.parent_span_id == bytes.fromhex(parent), span
        assert len(span.span_id) == 8 and span.span_id != bytes.fromhex(parent)
        assert span.kind == Span.SPAN_KIND_SERVER
        assert span.end_time_unix_nano >= span.start_time_unix_nano > 0
        assert span.status.code == Status.STATUS_CODE_UNSET
        assert a["http.request.method"] == "GET"
        assert a["http.response.status_code"] == status
        assert a["mds.key_prefix"] == key[:17], a
        assert span.name == f"GET {a['http.route']}"
        assert not any("INE296A01024" in str(v) for v in a.values()), "a raw path reached the span"
    # The store calls the two made (a key's first request reads its usage
    # this month): child spans of their requests'.
    for child in children:
        a = attrs(child)
        print(f"  {child.name}: {a}")
        parent = {history.span_id: history, article.span_id: article}.get(child.parent_span_id)
        assert parent is not None, child
        assert child.name == f"{a['db.operation.name']} {a['db.system']}", child
        assert parent.start_time_unix_nano <= child.start_time_unix_nano <= child.end_time_unix_nano
        assert child.end_time_unix_nano <= parent.end_time_unix_nano
    assert any(attrs(c)["db.system"] == "sqlite" for c in children), children
    secret = key[12:].encode()
    for p in bodies:
        assert secret not in p.read_bytes(), f"key material in {p}"
    for req in requests:
        assert secret not in req.SerializeToString()
    print("ok: the caller's trace continued, route templates, statuses, key prefixes, store calls as child spans, no key")


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("receive")
    r.add_argument("dir", type=pathlib.Path)
    r.add_argument("--discard", action="store_true")
    c = sub.add_parser("check")
    c.add_argument("dir", type=pathlib.Path)
    c.add_argument("--trace", required=True)
    c.add_argument("--parent", required=True)
    c.add_argument("--key", required=True)
    args = parser.parse_args()
    if args.command == "receive":
        receive(args.dir, args.discard)
    else:
        check(args.dir, args.trace, args.parent, args.key)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        raise
