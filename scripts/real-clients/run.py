#!/usr/bin/python3
"""Runs the reference project's real clients, unmodified, against a relay started from a build of this
project, and prints one line per flow: client | flow | PASS/FAIL | the client's own words.

Usage (Debian's python3, see README.md beside this file):
    /usr/bin/python3 scripts/real-clients/run.py /path/to/hermes-relay [/path/to/svc-relay-checkout]

The reference checkout is only read and imported; nothing of it is copied into this project. The
second argument (default: this checkout) must be built (`npm run build`).
"""
import argparse
import asyncio
import io
import json
import random
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = []


GAPS = []


def record(client, flow, ok, evidence, gap=None):
    """gap: the open issue a flow belongs to; a failing flow there is listed as GAP, not counted as FAIL."""
    line = re.sub(r"\s+", " ", str(evidence)).strip()[:160]
    if gap and not ok:
        GAPS.append((client, flow, gap, line))
        print(f"{client} | {flow} | GAP ({gap}) | {line}", flush=True)
        return
    RESULTS.append((client, flow, bool(ok), line))
    print(f"{client} | {flow} | {'PASS' if ok else 'FAIL'} | {line}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(pred, seconds=10.0, step=0.05):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            v = pred()
            if v:
                return v
        except Exception:
            pass
        time.sleep(step)
    return None


def http(method, url, body=None, token=None, operator_key=None):
    """A JSON request; `operator_key` makes it the operator's (the console API needs it, as the svc CLI sends it)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if body is not None:
        req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    if operator_key:
        req.add_header("x-operator-key", operator_key)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def captured(fn, *a, **kw):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rv = fn(*a, **kw)
    return rv, out.getvalue() + err.getvalue()


class Relay:
    def __init__(self, checkout, work, extra_env=None, log_name="relay.log"):
        self.port = free_port()
        self.home = Path(tempfile.mkdtemp(prefix="svc-home-", dir=work))
        self.url = f"http://127.0.0.1:{self.port}"
        # The public clients read only their own `hermes` names (WIRE.md "Spelling"): run the relay as their
        # users must, with RELAY_CLIENT_SPELLING=hermes (unless the caller sets another value to see a gap).
        env = dict(os.environ, SVC_HOME=str(self.home), RELAY_HOST="127.0.0.1", RELAY_PORT=str(self.port), PHONE_ENABLED="1", **(extra_env or {}))
        env.setdefault("RELAY_CLIENT_SPELLING", "hermes")
        env.pop("RELAY_TUI_COMMAND", None)
        env["HOME"] = str(self.home)  # no agent checkout under ~/.hermes: the default configuration
        self.log = open(work / log_name, "w")
        self.proc = subprocess.Popen(["node", str(checkout / "bin/svc"), "relay", "start"], env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        if not wait_until(lambda: http("GET", self.url + "/health")[0] == 200, 30):
            raise SystemExit(f"relay did not start; see {work / 'relay.log'}")

    def operator_key(self):
        """The key the relay made in its home at start: what the runner's own operator checks send (the svc CLI does the same)."""
        return (self.home / "relay" / "operator.key").read_text().strip()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


class Desktop:
    """The desktop CLI on Node 20: its main() through tsx, with a HOME of its own."""

    def __init__(self, ref, work):
        self.cwd = ref / "desktop"
        self.home = Path(tempfile.mkdtemp(prefix="desktop-home-", dir=work))
        self.entry = work / "desktop-cli.mjs"
        self.entry.write_text(
            f"import {{ main }} from {json.dumps((ref / 'desktop/src/cli.ts').as_uri())};\n"
            "main(process.argv).then((c) => process.exit(c ?? 0), (e) => { console.error(String(e?.stack ?? e)); process.exit(1); });\n"
        )
        self.argv = ["node", "--experimental-websocket", "--no-warnings", "--import", "tsx", str(self.entry)]

    def run(self, *args, timeout=30):
        env = dict(os.environ, HOME=str(self.home), NO_COLOR="1", FORCE_COLOR="0")
        t = time.monotonic()
        try:
            p = subprocess.run(self.argv + list(args), cwd=self.cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
            return p.returncode, strip_ansi(p.stdout + p.stderr), time.monotonic() - t
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return None, strip_ansi(out) + f" [timed out after {timeout}s]", time.monotonic() - t


def strip_ansi(s):
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", s)


def last_line(s, pattern=None):
    lines = [l for l in s.splitlines() if l.strip()]
    if pattern:
        hits = [l for l in lines if re.search(pattern, l)]
        if hits:
            return hits[0]
    return lines[-1] if lines else "(no output)"


def node_phone(checkout, work, relay, code, name, script_body):
    """A small app-shaped phone for the Threads flow (the app itself is an Android build)."""
    path = work / f"{name}.js"
    path.write_text(
        f"const WebSocket = require({json.dumps(str(checkout / 'node_modules/ws'))});\n"
        "const { randomUUID } = require('crypto');\n"
        f"const ws = new WebSocket({json.dumps(relay.url.replace('http', 'ws') + '/ws')});\n"
        "const send = (channel, type, payload = {}) => ws.send(JSON.stringify({ channel, type, id: randomUUID(), payload }));\n"
        f"ws.on('open', () => send('system', 'auth', {{ pairing_code: {json.dumps(code)}, device_name: {json.dumps(name)}, device_id: {json.dumps(name)}, client_surface: 'android', device_form_factor: 'phone' }}));\n"
        + script_body
    )
    return subprocess.Popen(["node", str(path)], stdout=open(work / f"{name}.log", "w"), stderr=subprocess.STDOUT)


def host_pairing(ref, relay):
    os.environ["RELAY_PORT"] = str(relay.port)
    os.environ["RELAY_HOST"] = "127.0.0.1"
    import plugin.pair as pair  # noqa: E402  (the host's pair command, from the reference checkout)

    health = pair.probe_relay(relay.port)
    record("host pair.py", "probe_relay", isinstance(health, dict) and health.get("status") == "ok", json.dumps(health)[:120])
    ok = pair.register_relay_code(relay.port, "HOST01", ttl_seconds=7 * 86400, grants={"terminal": 86400}, transport_hint="ws")
    record("host pair.py", "register_relay_code", ok is True, f"register_relay_code -> {ok}")
    minted = pair.mint_relay_pairing(
        relay.port, host="127.0.0.1", port=8642, api_key="", tls=False, ttl_seconds=30 * 86400, grants=None, transport_hint="ws", endpoints=None, dashboard_url=None
    )
    qr = json.loads(minted["qr_payload"]) if minted else None
    record("host pair.py", "mint_relay_pairing (api_key '')", bool(qr and qr.get("relay", {}).get("code")), f"qr relay.code={qr and qr['relay'].get('code')!r} url={qr and qr['relay'].get('url')!r}")
    args = argparse.Namespace(register_code="ab12cd", ttl="1d", grants="terminal=1h", transport_hint=None)
    rc, out = captured(pair.register_code_command, args)
    record("host pair.py", "pair --register-code (register_code_command)", rc == 0, last_line(out, "registered|error"))
    return minted


def desktop_flows(ref, checkout, work, relay, minted):
    d = Desktop(ref, work)
    ws_url = relay.url.replace("http", "ws")
    # The desktop grant is opt-in (PROTOCOL.md, Desktop tools): the operator pairs a desktop that serves the
    # agent's tools with it, as `svc relay pair --grants desktop=7d` does.
    http("POST", relay.url + "/pairing/register", {"code": "DESK01", "ttl_seconds": 7 * 86400, "grants": {"desktop": "7d"}})
    rc, out, _ = d.run("pair", "--code", "DESK01", "--remote", ws_url)
    record("desktop CLI", "pair --code --remote", rc == 0 and "Paired" in out, last_line(out, "Paired|rror"))
    rc, out, _ = d.run("devices")
    record("desktop CLI", "devices", rc == 0 and "desktop" in out, last_line(out, "desktop|rror"))
    rc, out, _ = d.run("status")
    record("desktop CLI", "status", rc == 0 and "expires" in out, last_line(out, "expires|rror"))
    sessions = json.loads(next((p.read_text() for p in d.home.rglob("remote-sessions.json")), "{}"))
    token = next(iter(re.findall(r'"token"\s*:\s*"([^"]+)"', json.dumps(sessions))), None)
    prefix = token[:8] if token else "????"
    rc, out, _ = d.run("devices", "extend", prefix, "--ttl", "3600")
    record("desktop CLI", "devices extend <self> --ttl 3600 (shorter: allowed)", rc == 0 and "extended" in out, last_line(out, "extended|rror"))
    rc, out, _ = d.run("devices", "extend", prefix, "--ttl", str(90 * 86400))
    record("desktop CLI", "devices extend past the pairing (refused: re-pair)", rc != 0 and "new pairing" in out, last_line(out, "pairing|rror"))

    # pair --pair-qr with the relay's invite URL: the desktop first checks the API server's /health.
    api = subprocess.Popen(["node", "-e", "require('http').createServer((q,s)=>{s.setHeader('content-type','application/json');s.end('{\"status\":\"ok\"}')}).listen(8642,'127.0.0.1')"])
    try:
        wait_until(lambda: socket.create_connection(("127.0.0.1", 8642), 0.2).close() or True, 5)
        d2 = Desktop(ref, work)
        rc, out, _ = d2.run("pair", "--pair-qr", minted["pairing_url"]) if minted else (None, "no invite: /pairing/mint failed", 0)
        record("desktop CLI", "pair --pair-qr <hermes-relay:// invite from /pairing/mint>", rc == 0 and "Paired" in out, last_line(out, "Paired|rror|invalid"))
    finally:
        api.terminate()

    # relay queue / --cancel: three messages queued for an absent phone, one cancelled.
    ids = [http("POST", relay.url + "/phone/message", {"chat_id": "phone", "text": f"queued {i}"})[1].get("message_id") for i in range(3)]
    rc, out, _ = d.run("relay", "queue")
    record("desktop CLI", "relay queue", rc == 0 and "3 waiting" in out, last_line(out, "waiting|rror"))
    rc, out, _ = d.run("relay", "queue", "--cancel", ids[1])
    left = http("GET", relay.url + "/phone/outbound", operator_key=relay.operator_key())[1]
    left_ids = [m.get("message_id") for m in (left or {}).get("messages", [])]
    record("desktop CLI", "relay queue --cancel <id> (only that one)", rc == 0 and left_ids == [ids[0], ids[2]], last_line(out, "cancelled|rror") + f"; left {len(left_ids)}")

    # chat in the default configuration (no TUI gateway): must say what to configure, fast.
    rc, out, secs = d.run("chat", "hi", timeout=20)
    record("desktop CLI", "chat 'hi' without a TUI gateway (fails fast, says what to set)", rc not in (0, None) and "RELAY_TUI_COMMAND" in out and secs < 10, f"{secs:.1f}s: " + last_line(out, "RELAY_TUI_COMMAND|rror"))

    # shell --raw in tmux: a real terminal, a real prompt.
    tm = f"svc-real-{os.getpid()}"
    env = f"HOME={d.home} NO_COLOR=1"
    cmd = f"cd {d.cwd} && env {env} {' '.join(d.argv)} shell --raw --no-tools; echo SHELL-EXIT=$?; sleep 5"
    subprocess.run(["tmux", "new-session", "-d", "-s", tm, "-x", "120", "-y", "30", cmd])
    try:
        pane = lambda: subprocess.run(["tmux", "capture-pane", "-p", "-t", tm], capture_output=True, text=True).stdout
        attached = wait_until(lambda: "Attached" in pane() and re.search(r"[$#] *$", pane(), re.M), 20)
        subprocess.run(["tmux", "send-keys", "-t", tm, "echo hi-$((40+2))", "Enter"])
        got = wait_until(lambda: "hi-42" in pane().replace("echo hi-$((40+2))", ""), 10)
        record("desktop CLI", "shell --raw (tmux): attach, type, see output", bool(attached and got), last_line(pane(), "^hi-42|rror") if got else pane()[-300:])
        subprocess.run(["tmux", "send-keys", "-t", tm, "C-a", "."])
        detached = wait_until(lambda: "SHELL-EXIT=0" in pane(), 10)
        record("desktop CLI", "shell --raw detach (Ctrl+A .)", bool(detached), last_line(pane(), r"\[shell\] detach|SHELL-EXIT"))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", tm], capture_output=True)
    subprocess.run(["tmux", "new-session", "-d", "-s", tm, "-x", "120", "-y", "30", cmd])
    try:
        again = wait_until(lambda: "re-attached" in pane() and "hi-42" in pane(), 20)
        record("desktop CLI", "shell --raw re-attach (scrollback replayed)", bool(again), last_line(pane(), "re-attached|rror"))
        subprocess.run(["tmux", "send-keys", "-t", tm, "exit", "Enter"])
        ended = wait_until(lambda: "SHELL-EXIT=0" in pane(), 10)
        record("desktop CLI", "shell --raw: the shell exits (eof)", bool(ended), last_line(pane(), r"\[shell\]|SHELL-EXIT"))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", tm], capture_output=True)
    rc, out, _ = d.run("sessions")
    record("desktop CLI", "sessions", rc == 0 and "default" in out, last_line(out, "default|rror"))
    rc, out, _ = d.run("relay", "info")
    record("desktop CLI", "relay info (GET /relay/info)", rc == 0 and "uptime" in out and "version" in out, last_line(out, "version|rror"))
    rc, out, _ = d.run("relay", "security")
    record("desktop CLI", "relay security (GET /relay/security)", rc == 0 and "rror" not in out, strip_ansi(out).strip().replace("\n", " | ")[:200])
    return d


def desktop_tools(ref, checkout, work, relay, desktop):
    """The desktop CLI's daemon serving its tools; the host's desktop_tool.py calling them through the relay."""
    env = dict(os.environ, HOME=str(desktop.home), NO_COLOR="1", FORCE_COLOR="0")
    ws_url = relay.url.replace("http", "ws")

    def start_daemon():
        log = open(work / "desktop-daemon.log", "a")
        return subprocess.Popen(desktop.argv + ["daemon", "--remote", ws_url, "--allow-tools", "--no-voice", "--log-json"],
                                cwd=desktop.cwd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def stop_daemon(p):
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
        wait_until(lambda: http("GET", relay.url + "/desktop/_ping")[0] == 503, 10)

    # The CLI's default access ("ask every time") waits for a local approval nobody gives here: the relay
    # answers 504 at the tool's 30 s timeout instead of hanging.
    daemon = start_daemon()
    try:
        if wait_until(lambda: http("GET", relay.url + "/desktop/_ping")[0] == 200, 45):
            t0 = time.monotonic()
            try:
                req = urllib.request.Request(relay.url + "/desktop/desktop_read_file", data=b'{"path": "/etc/hostname"}', method="POST", headers={"content-type": "application/json"})
                with urllib.request.urlopen(req, timeout=40) as r:
                    code, body = r.status, json.loads(r.read())
            except urllib.error.HTTPError as e:
                code, body = e.code, json.loads(e.read() or b"null")
            secs = time.monotonic() - t0
            record("desktop CLI", "daemon in 'ask every time' access, nobody approves: 504 desktop.timeout at 30 s", code == 504 and (body or {}).get("code") == "desktop.timeout" and 29 < secs < 35, f"{code} after {secs:.1f}s: {json.dumps(body)[:160]}")
    finally:
        stop_daemon(daemon)
    rc, out, _ = desktop.run("hosts", "access", "full-access", "--yes", "--remote", ws_url)
    record("desktop CLI", "hosts access full-access --yes (operator's choice for this run)", rc == 0, last_line(out, "access|rror"))
    daemon = start_daemon()
    try:
        ready = wait_until(lambda: http("GET", relay.url + "/desktop/_ping")[0] == 200, 45)
        record("desktop CLI", "daemon --allow-tools: desktop.status reaches the relay (GET /desktop/_ping 200)", bool(ready), json.dumps(http("GET", relay.url + "/desktop/_ping")[1]))
        if not ready:
            return
        os.environ.update(DESKTOP_RELAY_URL=relay.url)
        os.environ.pop("DESKTOP_RELAY_TOKEN", None)
        import plugin.tools.desktop_tool as t  # noqa: E402  (the agent's desktop tools)

        def tool(name, check, *a, **kw):
            try:
                v = getattr(t, name)(*a, **kw)
            except Exception as e:
                v = f"raised {type(e).__name__}: {e}"
            text = v if isinstance(v, str) else json.dumps(v)
            record("host desktop_tool.py", name + (f"({', '.join(map(repr, a))})" if a else ""), check(text), text[:240])
            return text

        tool("_check_tool", lambda s: s == "true", "desktop_read_file")
        tool("_check_tool", lambda s: s == "false", "desktop_no_such_tool")
        tool("_check_relay", lambda s: s == "true")
        target = work / "desktop-file.txt"
        tool("desktop_write_file", lambda s: '"ok": true' in s, str(target), "written by the agent through svc relay\n")
        tool("desktop_read_file", lambda s: "written by the agent through svc relay" in s, str(target))
        tool("desktop_terminal", lambda s: "hello-from-desktop" in s, "echo hello-from-desktop")
        tool("desktop_search_files", lambda s: "desktop-file.txt" in s, "desktop-file*", str(work))
        tool("desktop_checksum", lambda s: '"ok": true' in s, str(target))
        tool("desktop_health", lambda s: '"connected": true' in s and "desktop_read_file" in s)
        tool("desktop_read_file", lambda s: "error" in s.lower(), str(work / "missing.txt"))
    finally:
        stop_daemon(daemon)
    gone = http("GET", relay.url + "/desktop/_ping")[0] == 503
    record("desktop CLI", "daemon stopped: /desktop/_ping 503 (the host's tools hide themselves)", bool(gone), str(http("GET", relay.url + "/desktop/_ping")[0]))


def secure_link(ref, checkout, work):
    """The desktop CLI pairing through Secure Link (the pinned HTTPS origin) from a /pairing/mint invite."""
    sl_port = free_port()
    # This relay runs beside the main one: on a PostgreSQL log (RELAY_EVENT_STORE) it needs a database of its
    # own (RELAY_EVENT_STORE_SECOND), or the one-writer lock refuses it, as it should.
    second = {"RELAY_EVENT_STORE": os.environ["RELAY_EVENT_STORE_SECOND"]} if os.environ.get("RELAY_EVENT_STORE_SECOND") else {}
    relay = Relay(checkout, work, {"RELAY_SECURE_LINK_ENABLED": "1", "RELAY_SECURE_LINK_HOST": "127.0.0.1", "RELAY_SECURE_LINK_PORT": str(sl_port), **second}, "relay-secure-link.log")
    try:
        health = http("GET", relay.url + "/health")[1]
        pin = (health.get("secure_proxy") or {}).get("proxy", {}).get("pin_sha256")
        record("relay", "Secure Link up: /health secure_proxy candidate with its pin", health.get("secure_link", {}).get("status") == "available" and bool(pin), str(pin))
        d = Desktop(ref, work)
        # The CLI hands its pinned certificate to the WebSocket through a Bun-only option; under Node the same
        # certificate is trusted through NODE_EXTRA_CA_CERTS (the CLI still checks the pin itself first).
        cert = relay.home / "relay" / "secure-link" / "cert.pem"
        os.environ["NODE_EXTRA_CA_CERTS"] = str(cert)
        try:
            url = http("POST", relay.url + "/pairing/mint", {})[1]["pairing_url"]
            rc, out, _ = d.run("pair", "--pair-qr", url, timeout=60)
            record("desktop CLI", "pair --pair-qr: picks the Secure Link endpoint, checks its pin, pairs over wss /relay/ws", rc == 0 and "Secure Link" in out and "Paired" in out, last_line(out, "route|Paired|rror|pin"))
            rc, out, _ = d.run("devices")
            record("desktop CLI", "devices through Secure Link (GET /relay/.../sessions)", rc == 0 and "this device" in out, last_line(out, "this device|rror"))
            rc, out, _ = d.run("relay", "info")
            record("desktop CLI", "relay info through Secure Link", rc == 0 and "devices" in out, last_line(out, "devices|rror"))
        finally:
            os.environ.pop("NODE_EXTRA_CA_CERTS", None)
        # The certificate the origin serves has the pin the QR carries (what the clients compare).
        import ssl, socket, hashlib, base64  # noqa: E401
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        with socket.create_connection(("127.0.0.1", sl_port), timeout=5) as raw, ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            der = s.getpeercert(binary_form=True)
        spki = subprocess.run(["sh", "-c", "openssl x509 -inform der -pubkey -noout | openssl pkey -pubin -outform der"], input=der, capture_output=True).stdout
        served = "sha256/" + base64.b64encode(hashlib.sha256(spki).digest()).decode()
        record("relay", "the served certificate's SPKI pin is the QR's", served == pin, served)
    finally:
        relay.stop()


def desktop_voice(ref, checkout, relay):
    """The desktop CLI's local voice page server, proxying to relay voice (offline provider)."""
    code = "VOICE" + str(random.randint(0, 9))
    http("POST", relay.url + "/pairing/register", {"code": code})
    token = subprocess.run(
        ["node", "-e", "const W=require('ws');const w=new W(process.argv[1]);w.on('open',()=>w.send(JSON.stringify({channel:'system',type:'auth',id:'a',payload:{pairing_code:process.argv[2],device_name:'desk voice',device_id:'desk-voice'}})));w.on('message',d=>{process.stdout.write(JSON.parse(d).payload.session_token||'');w.close()})",
         relay.url.replace("http", "ws") + "/ws", code],
        cwd=checkout, capture_output=True, text=True, timeout=20).stdout.strip()
    p = subprocess.run(["node", "--experimental-websocket", "--import", "tsx", str(checkout / "scripts/real-clients/desktop-voice.mts"), str(ref), relay.url.replace("http", "ws"), token],
                       cwd=ref / "desktop", capture_output=True, text=True, timeout=120)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    synth = next((l for l in lines if l["flow"] == "synthesize"), {})
    record("desktop CLI", "voice page /synthesize -> relay /voice/synthesize (offline MP3)", synth.get("status") == 200 and synth.get("type") == "audio/mpeg" and synth.get("bytes", 0) > 1000, json.dumps(synth) or p.stderr[-300:])
    turn = next((l for l in lines if l["flow"] == "turn"), {})
    # On Node 20 the CLI's /turn handler aborts itself (its req 'close' fires once the body is read), before
    # it calls the relay; the relay's side of the turn is pinned by test/e2e/voice (the same multipart shape).
    aborted = "transcript" not in turn.get("events", [])
    record("desktop CLI", "voice page /turn (webm) -> relay /voice/transcribe", turn.get("status") == 200,
           json.dumps(turn) + ("; the CLI aborted its own turn before calling the relay (Node 20: req 'close' after the body)" if aborted else ""))


def device_control(ref, checkout, work, relay, desktop):
    http("POST", relay.url + "/pairing/register", {"code": "BRG001", "grants": {"bridge": 3600}})
    token_file = work / "phone.token"
    sim = subprocess.Popen(
        ["node", str(checkout / "bin/svc"), "phone-sim", "--mode", "app", "--relay", relay.url.replace("http", "ws"), "--code", "BRG001", "--save-token", str(token_file), "--quiet"],
        stdout=open(work / "phone-sim.log", "w"),
        stderr=subprocess.STDOUT,
    )
    try:
        token = wait_until(lambda: token_file.exists() and token_file.read_text().strip(), 15)
        wait_until(lambda: http("GET", relay.url + "/bridge/status")[1].get("phone_connected") is True, 10)
        os.environ.update(ANDROID_BRIDGE_URL=relay.url, ANDROID_BRIDGE_TOKEN=token or "", RELAY_PORT=str(relay.port))
        import plugin.tools.android_tool as t  # noqa: E402  (the agent's Device Control tools)

        def tool(name, check, *a, **kw):
            try:
                v = getattr(t, name)(*a, **kw)
            except Exception as e:  # a tool that raises is a failure the agent would see
                v = f"raised {type(e).__name__}: {e}"
            text = v if isinstance(v, str) else json.dumps(v)
            record("host android_tool.py", name + (f"({', '.join(map(repr, a))})" if a else ""), check(text), text)
            return text

        tool("_check_requirements", lambda s: s == "true")
        # Issue 35: the app keeps its own idle expiry; the relay holds no deadline for it (it would never switch it off).
        st = http("GET", relay.url + "/bridge/status")[1].get("safety") or {}
        record("runner", "GET /bridge/status: the app's idle expiry is its own", st.get("auto_disable_by") == "phone" and st.get("auto_disable_at") is None, json.dumps({k: st.get(k) for k in ("auto_disable_by", "auto_disable_minutes", "auto_disable_at")}))
        tool("android_ping", lambda s: '"pong": true' in s or '"ok"' in s)
        # Its default include_bounds=false: the app lists no node without bounds, the relay asks with them (issue 35).
        tool("android_read_screen", lambda s: '"nodes"' in s and '"Send"' in s and "error" not in s.lower()[:40])
        tool("android_tap", lambda s: '"x": 540' in s, x=540, y=1200)
        # The app's own answers (ActionExecutor.kt:262-275 tap_text, :419-427 swipe), as the app-mode simulator gives them.
        tool("android_tap_text", lambda s: '"via": "direct click"' in s, "Settings")
        tool("android_swipe", lambda s: '"start_x"' in s and '"end_y"' in s, "up", "medium")
        tool("android_wait", lambda s: "error" not in s.lower(), text="Done", timeout_ms=50)
        shot = tool("android_screenshot", lambda s: "MEDIA:hermes-relay://" in s)
        m = re.search(r"MEDIA:hermes-relay://([A-Za-z0-9_-]+)", shot)
        if m:
            req = urllib.request.Request(f"{relay.url}/media/{m.group(1)}", headers={"authorization": f"Bearer {token}"})
            with urllib.request.urlopen(req, timeout=10) as r:
                record("host android_tool.py", "screenshot token fetch (GET /media/{token})", r.status == 200 and r.read(8).startswith(b"\x89PNG"), f"{r.status} {r.headers.get('content-type')}")
        f = work / "share.txt"
        f.write_text("from the host\n")
        tool("android_share_media", lambda s: "share_opened" in s or '"ok": true' in s, path=str(f), text="a file")
        tool("android_press_key", lambda s: "error" not in s.lower(), "home")

        import plugin.relay.client as rc  # noqa: E402  (the host's media registration)

        img = work / "chart.png"
        img.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
        mt = rc.register_media(str(img), "image/png", "chart.png", port=relay.port, sensitive=True)
        fetched = None
        if mt:
            req = urllib.request.Request(f"{relay.url}/media/{mt}", headers={"authorization": f"Bearer {token}"})
            with urllib.request.urlopen(req, timeout=10) as r:
                fetched = (r.status, r.headers.get("x-media-sensitive"), r.headers.get("content-disposition"))
        record("host relay/client.py", "register_media (sensitive) then the phone fetches it", bool(fetched and fetched[0] == 200 and fetched[1] == "1"), f"token {str(mt)[:6]}...: {fetched}")
        denied, _ = captured(rc.register_media, "/etc/shadow", "text/plain", port=relay.port)
        record("host relay/client.py", "register_media of a system path is refused", denied is None, f"register_media('/etc/shadow') -> {denied}")
        tool("android_return_to_hermes", lambda s: '"ok": true' in s)
    finally:
        sim.terminate()
        sim.wait(10)
    wait_until(lambda: http("GET", relay.url + "/bridge/status")[1].get("phone_connected") is False, 10)
    v = t._check_requirements()
    record("host android_tool.py", "_check_requirements with no phone", v is False, f"_check_requirements -> {v}")
    # The desktop revokes the simulator's session (any paired device may revoke another); `--only bridge` has no desktop.
    if desktop is None:
        return
    rc, out, _ = desktop.run("devices", "revoke", token[:8] if token else "????")
    record("desktop CLI", "devices revoke <another device>", rc == 0 and "revoked" in out, last_line(out, "revoked|rror"))


def threads(ref, checkout, work, relay):
    sys.path.insert(0, str(HERE / "stubs"))
    os.environ.update(PHONE_ENABLED="1", PHONE_RELAY_URL=relay.url)
    import plugin.phone_platform as pp  # noqa: E402  (the host's Threads platform)
    from gateway.config import PlatformConfig  # the stand-in
    from gateway.platforms import base

    if not (pp.GATEWAY_AVAILABLE and pp.HTTPX_AVAILABLE):
        record("host phone_platform.py", "PhoneAdapter import", False, f"gateway={pp.GATEWAY_AVAILABLE} httpx={pp.HTTPX_AVAILABLE} (apt-get install python3-httpx)")
        return
    http("POST", relay.url + "/pairing/register", {"code": "THR001"})
    phone = node_phone(
        checkout,
        work,
        relay,
        "THR001",
        "threads-phone",
        "ws.on('message', (d) => { const f = JSON.parse(d.toString()); console.log(f.channel, f.type, JSON.stringify(f.payload).slice(0, 200));\n"
        "  if (f.type === 'auth.ok') { send('proactive', 'proactive.subscribe'); send('notifications', 'notification.posted', { package_name: 'com.bank', title: 'Bank', text: 'code 482913', sub_text: null, posted_at: Date.now(), key: 'otp-1' }, 'n1'); }\n"
        "  if (f.type === 'proactive.backlog.complete') send('proactive', 'proactive.reply', { text: 'ship it', chat_id: 'phone', message_id: 'client-1', ts: Date.now() });\n"
        "  if (f.type === 'phone.message' && /answer/.test(f.payload.text)) { console.log('GOT-ANSWER'); }\n"
        "});\n",
    )

    async def loop():
        adapter = pp.PhoneAdapter(PlatformConfig(extra={}))
        await adapter.connect(is_reconnect=False)
        await asyncio.sleep(8)
        sent = await adapter.send("phone", "answer to ship it")
        await adapter.disconnect()
        return sent

    _, out = captured(lambda: asyncio.run(loop()))
    counts = {}
    for _, text in base.DISPATCHED:
        counts[text] = counts.get(text, 0) + 1
    record("host phone_platform.py", "PhoneAdapter reply loop: one phone reply, 8 s of polling", counts == {"ship it": 1}, f"dispatched {counts}")
    got = wait_until(lambda: "GOT-ANSWER" in (work / "threads-phone.log").read_text(), 10)
    record("host phone_platform.py", "PhoneAdapter.send reaches the subscribed phone", bool(got), last_line((work / "threads-phone.log").read_text(), "answer to"))
    ack = "proactive.reply.ack" in (work / "threads-phone.log").read_text()
    record("app (shaped)", "proactive.reply answered with proactive.reply.ack", ack, last_line((work / "threads-phone.log").read_text(), "reply.ack"))
    notifications(relay)
    phone.terminate()


def notifications(relay):
    """The host's android_notifications_recent reads what the phone sent, and the same entry once forgotten."""
    os.environ["RELAY_PORT"] = str(relay.port)
    import plugin.tools.android_notifications as an  # noqa: E402  (the agent's notifications tool)

    def bank():
        answer = json.loads(an.android_notifications_recent(limit=20))
        return answer, next((n for n in answer.get("notifications", []) if n.get("package_name") == "com.bank"), None)

    answer, entry = bank()
    record("host android_notifications.py", "android_notifications_recent lists the phone's notification", answer.get("status") == "ok" and bool(entry) and entry.get("text") == "code 482913", json.dumps(entry)[:200])
    prefix = entry and entry.get("token_prefix")
    # The operator forgets (the console's action): with the operator key from the relay's home.
    status, body = http("POST", relay.url + "/console/api/personal-data/forget", {"device": prefix or "none"}, operator_key=relay.operator_key())
    answer, entry = bank()
    ok = status == 200 and answer.get("status") == "ok" and bool(entry) and entry.get("text") is None and entry.get("title") is None
    record("host android_notifications.py", "after forgetting the device: the entry is there, title and text null", ok, f"forget {status} {body}; {json.dumps(entry)[:160]}")


def doctor(ref, relay):
    import plugin.doctor as doc  # noqa: E402  (the host's doctor)

    report, _ = captured(doc.collect_doctor_report, relay_port=relay.port, timeout=1.0)
    checks = {c.get("id"): c for c in report.get("checks", [])}
    c = checks.get("relay-loopback", {})
    record("host doctor.py", "relay-loopback check (GET /relay/info)", c.get("status") == "ok", f"{c.get('status')}: {c.get('summary')}")
    # Everything else it checks (the API server, the dashboard, the plugin's own install) is not the relay.


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reference", type=Path)
    ap.add_argument("checkout", type=Path, nargs="?", default=HERE.parent.parent)
    ap.add_argument("--only", default="host,desktop,desktop-tools,bridge,threads,doctor,voice,secure-link")
    a = ap.parse_args()
    ref, checkout = a.reference.resolve(), a.checkout.resolve()
    if not (checkout / "dist").exists():
        raise SystemExit(f"{checkout} is not built: run `npm run build` there first")
    if not (ref / "desktop/node_modules/tsx").exists():
        subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=ref / "desktop", check=True)
    sys.path.insert(0, str(ref))
    work = Path(tempfile.mkdtemp(prefix="svc-real-clients-"))
    only = set(a.only.split(","))
    relay = Relay(checkout, work)

    def stage(name, fn, *args):
        try:
            return fn(*args)
        except Exception as e:  # one client's crash is a result; the other flows still run
            import traceback

            traceback.print_exc()
            record("runner", f"{name}: unexpected error", False, f"{type(e).__name__}: {e}")
            return None

    try:
        minted = stage("host", host_pairing, ref, relay) if "host" in only or "desktop" in only else None
        desk = stage("desktop", desktop_flows, ref, checkout, work, relay, minted) if "desktop" in only else None
        if "desktop-tools" in only and desk:
            stage("desktop-tools", desktop_tools, ref, checkout, work, relay, desk)
        if "bridge" in only:
            stage("bridge", device_control, ref, checkout, work, relay, desk)
        if "threads" in only:
            stage("threads", threads, ref, checkout, work, relay)
        if "voice" in only:
            stage("voice", desktop_voice, ref, checkout, relay)
        if "secure-link" in only:
            stage("secure-link", secure_link, ref, checkout, work)
        if "doctor" in only:
            stage("doctor", doctor, ref, relay)
    finally:
        relay.stop()
    passed = sum(1 for r in RESULTS if r[2])
    failed = len(RESULTS) - passed
    print(f"\nrelay log and client files: {work}")
    for client, flow, gap, line in GAPS:
        print(f"not built yet ({gap}): {client} | {flow} | {line}")
    print(f"{passed} passed, {failed} failed")
    if failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
