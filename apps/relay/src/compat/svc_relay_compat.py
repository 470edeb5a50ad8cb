"""svc relay compatibility hook (spec 4.12), version 2.

Loaded at interpreter start by svc_relay_compat.pth. When aiohttp.web is imported it wraps
Application.pre_freeze: just before an API server's router freezes (every upstream route registered by
then), the hook adds the compatibility routes that server does not have. It recognises the agent's API
server by its /v1/chat/completions route and leaves every other aiohttp application alone.

Rules: a route the server already has (same method and path) is never shadowed; session CRUD is never
injected; PUT /api/skills/toggle is an explicit 501; what this hook cannot serve faithfully (session
search, memory writes, provider model lists, slash commands) is not injected, so clients see the feature
as absent rather than a write going somewhere else. Any failure is logged and leaves the server as it was.

/api/config: the API server key is handed to paired phones (in the pairing QR), so holding it must not
mean holding the agent's provider credentials. Both routes answer only when the API server has a key
(403 otherwise: an open server would hand them to anyone who can reach it). GET masks every value under
a secret-looking name (api_key, token, secret, password, key...), at any depth, credentials inside URLs
and strings shaped like provider keys. PATCH takes only "model" and "provider" (never base_url or a key,
which would send the agent's traffic, and its key, elsewhere), refuses any other field by name, and keeps
every other field of the file.
"""
import importlib.abc
import importlib.util
import json
import logging
import os
import re
import sys
import tempfile

log = logging.getLogger("svc_relay_compat")
VERSION = 2
_DONE = "_svc_relay_compat_done"
_PATCHED = "_svc_relay_compat_patched"


def _home():
    return os.environ.get("SVC_HOME") or os.path.expanduser("~/.svc")


def _config_path():
    return os.environ.get("RELAY_SVC_CONFIG") or os.path.join(_home(), "config.yaml")


def _authorized(request):
    adapter = request.app.get("api_server_adapter") if hasattr(request.app, "get") else None
    check = getattr(adapter, "_check_auth", None)
    if check is not None:
        return check(request)
    key = os.environ.get("API_SERVER_KEY")
    if not key:
        return None
    from aiohttp import web

    if request.headers.get("Authorization", "") != "Bearer " + key:
        return web.json_response({"error": "unauthorized"}, status=401)
    return None


def _adapter(request):
    return request.app.get("api_server_adapter") if hasattr(request.app, "get") else None


def _key_configured(request):
    """The API server checks a bearer: the agent's adapter holds its key, else API_SERVER_KEY does."""
    adapter = _adapter(request)
    if adapter is not None and hasattr(adapter, "_api_key"):
        return bool(getattr(adapter, "_api_key"))
    return bool(os.environ.get("API_SERVER_KEY"))


def _error(status, code, message, **extra):
    from aiohttp import web

    body = {"ok": False, "error": message, "code": code}
    body.update(extra)
    return web.json_response(body, status=status)


def _config_denied(request):
    if not _key_configured(request):
        return _error(
            403,
            "compat.api_key_required",
            "the agent's config is served only by an API server with a key (set API_SERVER_KEY): without one anyone who reaches it would read and change it",
        )
    return _authorized(request)


_SECRET_WORDS = frozenset(
    (
        "key", "keys", "apikey", "token", "secret", "secrets", "password", "passwd", "pwd", "passphrase",
        "credential", "credentials", "auth", "authorization", "bearer", "cookie", "cookies",
    )
)
_SECRET_SHAPE = re.compile(r"^(?:Bearer\s+\S|(?:sk|rk|pk)[-_][A-Za-z0-9_-]{12,}|ghp_|gho_|ghs_|github_pat_|xox[abprs]-|AIza[0-9A-Za-z_-]{20,}|hf_[A-Za-z0-9]{16,}|glpat-|AKIA[0-9A-Z]{12,})")
_URL_WITH_SECRET = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
MASK = "********"


def _secret_name(name):
    words = re.split(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])", str(name))
    return any(w.lower() in _SECRET_WORDS for w in words if w)


def _mask_url(value):
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        u = urlsplit(value)
        netloc = u.netloc
        if "@" in netloc:
            netloc = MASK + "@" + netloc.rsplit("@", 1)[1]
        query = u.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(_secret_name(k) for k, _ in pairs):
                query = urlencode([(k, MASK if _secret_name(k) else v) for k, v in pairs], safe="*")
        return urlunsplit((u.scheme, netloc, u.path, query, u.fragment))
    except ValueError:
        return MASK


def _mask_value(value):
    if isinstance(value, str):
        if _SECRET_SHAPE.match(value.strip()):
            return MASK
        if _URL_WITH_SECRET.match(value.strip()):
            return _mask_url(value.strip())
    return value


def _mask_all(value):
    """Everything under a secret-looking name: strings and numbers masked, the shape kept."""
    if isinstance(value, dict):
        return {k: _mask_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_all(v) for v in value]
    if isinstance(value, bool) or value is None or value == "":
        return value
    return MASK


def masked(value):
    """A copy of a config tree a key holder may read: no credential of the agent's in it."""
    if isinstance(value, dict):
        return {k: (_mask_all(v) if _secret_name(k) else masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        # A command line (an MCP server's args): the value after a secret-named flag, or after its "=".
        out = []
        for i, v in enumerate(value):
            prev = value[i - 1] if i > 0 else None
            if isinstance(prev, str) and prev.startswith("-") and "=" not in prev and _secret_name(prev):
                out.append(_mask_all(v))
            elif isinstance(v, str) and v.startswith("-") and "=" in v and _secret_name(v.split("=", 1)[0]):
                out.append(v.split("=", 1)[0] + "=" + MASK)
            else:
                out.append(masked(v))
        return out
    return _mask_value(value)


def _load_yaml(path):
    import yaml

    try:
        with open(path, "r", encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def _atomic_write(path, text):
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".svc-compat-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _text(v):
    return v.strip() if isinstance(v, str) else ""


def _model_view(cfg):
    """What the reference's route answers at the top level; base_url without any credential in it."""
    m = cfg.get("model")
    if isinstance(m, dict):
        return {
            "model": _text(m.get("default")) or _text(m.get("model")),
            "provider": _text(m.get("provider")),
            "api_mode": _text(m.get("api_mode")),
            "base_url": _mask_value(_text(m.get("base_url"))),
        }
    return {"model": _text(m), "provider": "", "api_mode": "", "base_url": ""}


async def _skills_toggle(request):
    denied = _authorized(request)
    if denied is not None:
        return denied
    from aiohttp import web

    await request.read()
    return web.json_response(
        {"error": "skill_toggle_not_implemented", "detail": "enabling or disabling a skill needs the agent's own API; this host does not have it"},
        status=501,
    )


async def _skill_detail(request):
    denied = _authorized(request)
    if denied is not None:
        return denied
    from aiohttp import web

    name = request.match_info.get("name", "")
    if not name or name.startswith(".") or "/" in name or "\\" in name or ".." in name:
        return web.json_response({"error": "invalid skill name"}, status=400)
    root = os.path.join(_home(), "skills")
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if os.path.basename(dirpath) == name and "SKILL.md" in filenames:
            p = os.path.join(dirpath, "SKILL.md")
            if os.path.islink(p):
                continue
            with open(p, "r", encoding="utf-8", errors="replace") as fh:
                content = fh.read(256 * 1024)
            return web.json_response({"success": True, "name": name, "path": os.path.relpath(p, root), "content": content})
    return web.json_response({"success": False, "error": "no skill named " + name}, status=404)


async def _config_get(request):
    denied = _config_denied(request)
    if denied is not None:
        return denied
    from aiohttp import web

    cfg = _load_yaml(_config_path())
    out = _model_view(cfg)
    out["config"] = masked(cfg)
    return web.json_response(out)


PATCHABLE = ("model", "provider")
_PROVIDER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


async def _config_patch(request):
    denied = _config_denied(request)
    if denied is not None:
        return denied
    from aiohttp import web
    import yaml

    try:
        body = await request.json()
    except Exception:
        return _error(400, "compat.bad_json", "the body is not valid JSON")
    if not isinstance(body, dict):
        return _error(400, "compat.bad_body", "the body must be a JSON object")
    unknown = sorted(str(k)[:64] for k in body if k not in PATCHABLE)
    if unknown:
        return _error(
            400,
            "compat.field_not_writable",
            "only model and provider can be changed here; not writable: " + ", ".join(unknown),
            unknown=unknown,
            writable=list(PATCHABLE),
        )
    for k, v in body.items():
        if not isinstance(v, str) or not v.strip() or len(v) > 256 or any(ord(c) < 32 or ord(c) == 127 for c in v):
            return _error(400, "compat.bad_value", k + " must be a non-empty string of at most 256 characters")
    if "provider" in body and not _PROVIDER.match(body["provider"].strip()):
        return _error(400, "compat.bad_value", "provider must be a provider id (letters, digits and ._:-)")
    path = _config_path()
    cfg = _load_yaml(path)
    model = cfg.get("model")
    model = dict(model) if isinstance(model, dict) else ({"default": model} if isinstance(model, str) else {})
    before = (model.get("default"), str(model.get("provider") or "").lower())
    if "model" in body:
        model["default"] = body["model"].strip()
    if "provider" in body:
        model["provider"] = body["provider"].strip()
    after = (model.get("default"), str(model.get("provider") or "").lower())
    if before != after:
        model.pop("context_length", None)
    cfg["model"] = model
    try:
        _atomic_write(path, yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
    except OSError as exc:
        log.warning("svc relay compat: config not saved: %s", exc)
        return _error(500, "compat.config_not_saved", "could not save the config")
    out = _model_view(cfg)
    out["ok"] = True
    return web.json_response(out)


async def _memory_get(request):
    denied = _authorized(request)
    if denied is not None:
        return denied
    from aiohttp import web

    target = request.query.get("target", "all")
    if target not in ("all", "memory", "user"):
        return web.json_response({"error": "target must be one of: all, memory, user"}, status=400)
    files = {"memory": "MEMORY.md", "user": "USER.md"}
    out = []
    for t in ("memory", "user"):
        if target not in ("all", t):
            continue
        p = os.path.join(_home(), "memories", files[t])
        try:
            with open(p, "r", encoding="utf-8", errors="replace") as fh:
                text = fh.read(256 * 1024)
        except FileNotFoundError:
            text = ""
        entries = [e.strip() for e in text.split("\n\n") if e.strip()]
        out.append({"target": t, "entries": entries, "entry_count": len(entries)})
    return web.json_response({"targets": out})


ROUTES = [
    ("PUT", "/api/skills/toggle", _skills_toggle),
    ("GET", "/api/skills/{name}", _skill_detail),
    ("GET", "/api/config", _config_get),
    ("PATCH", "/api/config", _config_patch),
    ("GET", "/api/memory", _memory_get),
]


def _has(app, method, path):
    for resource in app.router.resources():
        info = resource.get_info()
        canonical = getattr(resource, "canonical", None) or info.get("path") or info.get("formatter")
        if canonical != path:
            continue
        for route in resource:
            if route.method in (method, "*"):
                return True
    return False


def _is_api_server(app):
    try:
        return any(
            (getattr(r, "canonical", None) or r.get_info().get("path")) in ("/v1/chat/completions", "/v1/runs")
            for r in app.router.resources()
        )
    except Exception:
        return False


def _add_routes(app):
    if app.__dict__.get(_DONE) or not _is_api_server(app):
        return
    app.__dict__[_DONE] = True
    added = []
    for method, path, handler in ROUTES:
        try:
            if _has(app, method, path):
                continue
            app.router.add_route(method, path, handler)
            added.append(method + " " + path)
        except Exception:
            log.warning("svc relay compat: %s %s not added", method, path, exc_info=True)
    app["svc_relay_compat"] = {"version": VERSION, "added": added}
    log.info("svc relay compat: added %s", ", ".join(added) or "nothing (the server has them all)")


def _patch(web):
    app_cls = web.Application
    if getattr(app_cls, _PATCHED, False):
        return
    original = app_cls.pre_freeze

    def pre_freeze(self):
        if not getattr(self, "_pre_frozen", False):
            try:
                _add_routes(self)
            except Exception:
                log.warning("svc relay compat: skipped", exc_info=True)
        return original(self)

    app_cls.pre_freeze = pre_freeze
    setattr(app_cls, _PATCHED, True)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "aiohttp.web":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        inner = spec.loader

        class _Loader(importlib.abc.Loader):
            def create_module(self, s):
                return inner.create_module(s)

            def exec_module(self, module):
                inner.exec_module(module)
                try:
                    _patch(module)
                except Exception:
                    log.warning("svc relay compat: not installed in this process", exc_info=True)

        spec.loader = _Loader()
        return spec


def install():
    if "aiohttp.web" in sys.modules:
        _patch(sys.modules["aiohttp.web"])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


install()
