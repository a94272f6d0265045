# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_dashboard.py -- `kf dashboard` in a real headless browser.

PostgreSQL + coordinator + 2 CPU workers; a short softmax campaign, with a
candidate proposed to it that fails to compile (an evaluation with a
reason, and the reason echoes markup); a second campaign whose NAME is
markup.  Then `kf dashboard` (a separate process, holding no credential)
and Debian's chromium driven through chromedriver's W3C WebDriver HTTP
protocol from urllib (no packages beyond the standard library):

1. Without a credential / goes to the login page and the JSON is 401; a
   wrong token typed into the form gets the login page again with the
   refusal, no campaign table and no data; a worker token (a role the
   coordinator does not let read campaigns) is refused the same way; a
   token in a URL is refused (400).
2. With a submitter token (created by `kf token create`, a credential
   only the coordinator knows) the form logs in: an HttpOnly,
   SameSite=Strict cookie that is not the token; the page shows the
   campaign row with per-class progress, the best-so-far chart and the
   roofline plot with points, the evaluations with their reasons (the
   compile error's among them), the best source beside the reference.
   A refresh keeps the rows of campaigns that did not change (a rebuild
   under a click's press and release would swallow the click).
3. The hostile names and reasons render as text: the exact strings are in
   the DOM's text, no injected <script>/<img> element exists anywhere in
   the page and none of the injected handlers ran.
4. The same JSON through `Authorization: Bearer` agrees with the store
   (psql); revoking the token ends the session (the page's next call is
   401).
5. A screenshot is kept: <build dir>/artifacts/dashboard.png.
6. A login form posted from another origin is refused (403, no cookie);
   `--https-cert/--https-key` serve TLS and the cookie is then Secure;
   405 for other methods, 404 JSON for unknown endpoints; with the
   coordinator stopped the API says 502 "service unavailable" and the
   dashboard stays up, and it exits 0 on SIGTERM; a coordinator serving
   TLS is reached with --tls-ca (and is a 502 without).

Skipped (77) when chromium or chromedriver is missing (scripts/setup
installs both).
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfcampaign  # noqa: E402
import kfe2e  # noqa: E402
from kfe2e import check  # noqa: E402

EVALS = 14
HOSTILE_NAME = ('<script>window.kfPwned=1</script>'
                '<img src=x onerror="window.kfPwned=2">')
# gcc echoes the #error line into the reason the dashboard shows.
HOSTILE_SOURCE = ('#include "kf_candidate.h"\n'
                  '#error <img src=x onerror="window.kfPwned=3"> bad\n')
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


# ------------------------------------------------------------ webdriver --

class WebDriver:
    """The few W3C WebDriver commands this test needs, over urllib."""

    def __init__(self, c, port):
        self.base = "http://127.0.0.1:%d" % port
        self.c = c
        prof = os.path.join(c.dir, "chromium-profile")
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": shutil.which("chromium"),
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--no-first-run",
                         "--window-size=1400,2000",
                         "--user-data-dir=" + prof]}}}}
        # Starting a browser on a loaded 2-core machine takes a while, and
        # chromedriver gives up on a browser that is slow to start: try
        # again (a fresh profile each time) before calling it a failure.
        last = None
        for attempt in range(3):
            opts = caps["capabilities"]["alwaysMatch"]["goog:chromeOptions"]
            opts["args"][-1] = "--user-data-dir=%s.%d" % (prof, attempt)
            try:
                r = self.call("POST", "/session", caps,
                              timeout=min(600, 120 * kfe2e.SLACK))
                break
            except (kfe2e.TestFailure, OSError) as e:
                last = e
                c.log("webdriver session attempt %d: %s" % (attempt + 1, e))
        else:
            raise kfe2e.TestFailure("no browser session: %s" % last)
        self.sid = r["sessionId"]
        self.s = "/session/" + self.sid

    def call(self, method, path, body=None, timeout=60):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data,
                                     method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read().decode())["value"]
        except urllib.error.HTTPError as e:
            raise kfe2e.TestFailure("webdriver %s %s: %d %s" % (
                method, path, e.code, e.read().decode(errors="replace")[:600]))

    def get(self, url):
        self.call("POST", self.s + "/url", {"url": url}, timeout=120)

    def js(self, script, *args):
        return self.call("POST", self.s + "/execute/sync",
                         {"script": script, "args": list(args)})

    def find(self, css):
        r = self.call("POST", self.s + "/element",
                      {"using": "css selector", "value": css})
        return r[ELEMENT]

    def type(self, css, text):
        e = self.find(css)
        self.call("POST", self.s + "/element/%s/clear" % e, {})
        self.call("POST", self.s + "/element/%s/value" % e, {"text": text})

    def click(self, css):
        e = self.find(css)
        self.call("POST", self.s + "/element/%s/click" % e, {}, timeout=120)

    def cookies(self):
        return self.call("GET", self.s + "/cookie")

    def delete_cookies(self):
        self.call("DELETE", self.s + "/cookie")

    def screenshot(self, path):
        png = base64.b64decode(self.call("GET", self.s + "/screenshot",
                                         timeout=120))
        with open(path, "wb") as f:
            f.write(png)
        return len(png)

    def quit(self):
        try:
            self.call("DELETE", self.s, timeout=30)
        except Exception as e:  # cleanup
            print("webdriver quit: %s" % e, file=sys.stderr)


def http(url, token=None, data=None, method=None, headers=None, ctx=None):
    """(status, body text, headers) of one request, never raising on an
    HTTP error status; redirects are not followed."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    req = urllib.request.Request(url, data=data, method=method)
    if token is not None:
        req.add_header("Authorization", "Bearer " + token)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    handlers = [NoRedirect]
    if ctx is not None:
        handlers.append(urllib.request.HTTPSHandler(context=ctx))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(req, timeout=60) as r:
            return r.status, r.read().decode(errors="replace"), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace"), e.headers


# ------------------------------------------------------------------ test --

def check_coordinator_tls(c, denv, tok):
    """A coordinator serving TLS: the dashboard reaches it with --tls-ca
    (as every remote kf command), and without it gets a clear 502."""
    tls = os.path.join(c.dir, "tls")
    os.makedirs(tls)

    def sh(cmd):
        r = subprocess.run(cmd, shell=True, cwd=tls, capture_output=True,
                           timeout=120)
        check(r.returncode == 0, "%s: %s" % (cmd, r.stderr.decode()))
    sh("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=e2e CA'"
       " -keyout ca.key -out ca.pem")
    sh("openssl req -newkey rsa:2048 -nodes -subj '/CN=coordinator'"
       " -keyout srv.key -out srv.csr")
    with open(os.path.join(tls, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    sh("openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key"
       " -CAcreateserial -days 2 -extfile san.ext -out srv.pem")
    c.start_coordinator(extra=("--tls-cert", os.path.join(tls, "srv.pem"),
                               "--tls-key", os.path.join(tls, "srv.key")))
    for name, extra, want in (
            ("dashboard-ctls", ("--tls-ca", os.path.join(tls, "ca.pem")), 200),
            ("dashboard-plain", (), 502)):
        pf = os.path.join(c.dir, name + ".port")
        p = kfe2e.Proc(name, [c.path("kf"), "dashboard", "--listen",
                              "127.0.0.1:0", "--coordinator", c.target,
                              "--port-file", pf] + list(extra),
                       os.path.join(c.dir, name + ".log"), denv)
        c.procs.append(p)

        def port():
            check(p.alive(), "%s exited %s" % (name, p.popen.returncode))
            try:
                with open(pf) as f:
                    return int(f.read().strip() or 0)
            except (FileNotFoundError, ValueError):
                return 0
        base = "http://127.0.0.1:%d" % kfe2e.wait_until(port, 60, "its port")
        s, b, _ = http(base + "/api/campaigns", token=tok)
        check(s == want and (want != 200 or "softmax dashboard" in b),
              "%s to a TLS coordinator: %d (want %d) %s"
              % (name, s, want, b[:300]))
        check(p.terminate(grace=60) == 0, "%s did not stop cleanly" % name)
    c.log("dashboard to a TLS coordinator checked")


def check_https(c, denv):
    """--https-cert/--https-key: served over TLS, the session cookie is
    Secure, and the form login works with a fresh submitter token."""
    import ssl
    cert = os.path.join(c.dir, "dash.pem")
    key = os.path.join(c.dir, "dash.key")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cert],
                       capture_output=True, timeout=120)
    check(r.returncode == 0, "openssl: %s" % r.stderr.decode())
    tok = c.kf("token", "create", "--role", "submitter", "--name", "dash-tls",
               "--db", c.conninfo).split()[1]
    pf = os.path.join(c.dir, "dash-tls.port")
    p = kfe2e.Proc("dashboard-tls", [c.path("kf"), "dashboard", "--listen",
                                     "127.0.0.1:0", "--coordinator", c.target,
                                     "--port-file", pf, "--https-cert", cert,
                                     "--https-key", key],
                   os.path.join(c.dir, "dashboard-tls.log"), denv)
    c.procs.append(p)

    def port():
        check(p.alive(), "kf dashboard --https-cert exited %s"
              % p.popen.returncode)
        try:
            with open(pf) as f:
                return int(f.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0
    base = "https://127.0.0.1:%d" % kfe2e.wait_until(port, 60, "its port")
    ctx = ssl.create_default_context(cafile=cert)
    s, b, h = http(base + "/login", data=("token=" + tok).encode(), ctx=ctx,
                   headers={"Content-Type":
                            "application/x-www-form-urlencoded"})
    ck = h.get("Set-Cookie") or ""
    check(s == 303 and "Secure" in ck and "HttpOnly" in ck and
          "SameSite=Strict" in ck and tok not in ck,
          "HTTPS login: %d, cookie %r" % (s, ck))
    s, b, _ = http(base + "/api/campaigns", ctx=ctx,
                   headers={"Cookie": ck.split(";")[0]})
    check(s == 200 and "softmax dashboard" in b,
          "HTTPS API with the session: %d %s" % (s, b[:200]))
    s, b, _ = http(base + "/api/campaigns", ctx=ctx,
                   headers={"Cookie": "kf_dash_session=" + "0" * 64})
    check(s == 401, "a made-up session id got %d" % s)
    c.log("HTTPS dashboard checked")


STATE_JS = r"""
const q = s => document.querySelectorAll(s);
const t = s => { const e = document.querySelector(s); return e ? e.textContent : null; };
return {
  loaded: document.body.dataset.loaded || '',
  title: document.title,
  class_rows: q('#classes tbody tr').length,
  rows: [...q('#campaigns tbody tr')].map(r => ({
      id: Number(r.dataset.id), name: r.querySelector('td.name').textContent,
      classes: r.querySelectorAll('.class-progress').length})),
  best_points: q('#best-chart circle.pt').length,
  best_paths: q('#best-chart path.line').length,
  roof_points: q('#roofline-chart circle.pt').length,
  ceilings: q('#roofline-chart line.ceiling').length,
  evals: [...q('#evals tbody tr')].map(r => ({
      outcome: r.querySelector('td.outcome').textContent,
      stage: r.querySelector('td.stage').textContent,
      reason: r.querySelector('td.reason').textContent,
      diagnosis: r.querySelector('td.diagnosis').textContent})),
  best_source: t('#best-source'),
  ref_source: t('#ref-source'),
  detail_title: t('#detail-title'),
  status_line: t('#status-line'),
  hash: location.hash,
  login_form: q('#login-form').length,
  login_error: t('#login-error'),
  campaigns_table: q('#campaigns').length,
  injected: q('script:not([src]), img, iframe, object, embed').length,
  scripts: [...q('script')].map(s => s.getAttribute('src')),
  pwned: typeof window.kfPwned === 'undefined' ? null : window.kfPwned,
  body_text: document.body.innerText.slice(0, 20000),
};
"""


def state(wd):
    return wd.js(STATE_JS)


def login(wd, base, token):
    wd.get(base + "/login")
    kfe2e.wait_until(lambda: state(wd)["login_form"] == 1, 60,
                     "the login form")
    wd.type("#token", token)
    wd.click("#login-submit")


def body(c):
    driver = shutil.which("chromedriver")
    artifacts = os.path.join(c.bin, "artifacts")
    os.makedirs(artifacts, exist_ok=True)

    c.start_pg()
    c.start_coordinator()
    workers = [c.start_worker(n, slots=1) for n in ("w-a", "w-b")]
    kfe2e.wait_until(lambda: c.count("SELECT count(*) FROM workers") == 2,
                     30, "2 workers registered")
    cid = kfcampaign.submit(c, kfcampaign.problem_dir(), evals=EVALS,
                            extra=("--name", "softmax dashboard"))
    path = os.path.join(c.dir, "hostile.c")
    with open(path, "w") as f:
        f.write(HOSTILE_SOURCE)
    bad = json.loads(c.kf("campaign", "propose", str(cid), path,
                          "--proposer", "e2e.hostile", "--coordinator",
                          c.target, "--json"))
    hid = kfcampaign.submit(c, kfcampaign.problem_dir(), evals=2,
                            extra=("--name", HOSTILE_NAME))
    st = kfcampaign.wait_done(c, cid, 150, watch=[c.coord] + workers)
    check(st == "done", "campaign %d ended %r, not done" % (cid, st))
    kfcampaign.wait_done(c, hid, 150, watch=[c.coord] + workers)
    n = kfcampaign.n_evals(c, cid)
    bad_id = int(bad["candidate_id"])
    reason_md5 = c.scalar("SELECT md5(reason) FROM evaluations WHERE "
                          "candidate_id = %d AND reason LIKE '%%onerror%%'"
                          % bad_id)

    # Credentials: a submitter (may read), a worker (may not).
    sub = c.kf("token", "create", "--role", "submitter", "--name", "dash",
               "--db", c.conninfo).split()
    sub_id, sub_token = int(sub[0]), sub[1]
    sub2 = c.kf("token", "create", "--role", "submitter", "--name", "dash2",
                "--db", c.conninfo).split()[1]
    wtok = c.kf("token", "create", "--role", "worker", "--name", "dash-w",
                "--db", c.conninfo).split()[1]

    # The dashboard gets no credential at all: not even $KF_TOKEN.
    pf = os.path.join(c.dir, "dash.port")
    denv = dict(c.env)
    denv.pop("KF_TOKEN", None)
    dash = kfe2e.Proc("dashboard", [c.path("kf"), "dashboard", "--listen",
                                    "127.0.0.1:0", "--coordinator", c.target,
                                    "--port-file", pf],
                      os.path.join(c.dir, "dashboard.log"), denv)
    c.procs.append(dash)

    def dash_port():
        check(dash.alive(), "kf dashboard exited %s" % dash.popen.returncode)
        try:
            with open(pf) as f:
                return int(f.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0
    base = "http://127.0.0.1:%d" % kfe2e.wait_until(dash_port, 60,
                                                     "the dashboard's port")
    c.log("dashboard at %s" % base)

    # --- plain HTTP: no credential, wrong ones, a token in a URL
    s, b, h = http(base + "/")
    check(s == 303 and h["Location"] == "/login",
          "GET / without a credential: %d %r" % (s, h.get("Location")))
    for tok in (None, "kft_" + "0" * 64, wtok):
        s, b, _ = http(base + "/api/campaigns", token=tok)
        check(s in (401, 403) and "softmax" not in b and "kfPwned" not in b,
              "/api/campaigns with %r: %d %s" % (tok and tok[:8], s, b[:200]))
    s, b, _ = http(base + "/api/campaigns", token="kft_" + "0" * 64)
    check(s == 401, "a wrong bearer token got %d, not 401" % s)
    s, b, _ = http(base + "/api/campaigns/%d/series" % cid, token=wtok)
    check(s == 403, "a worker token got %d, not 403: %s" % (s, b[:200]))
    s, b, _ = http(base + "/api/campaigns?token=" + sub_token)
    check(s == 400 and "URL" in b, "a token in the URL: %d %s" % (s, b[:200]))
    s, b, _ = http(base + "/static/app.js")
    check(s == 401, "app.js without a credential: %d" % s)
    # Login CSRF: another site's form may not log a browser in.
    for hdr in ({"Origin": "http://evil.example"},
                {"Sec-Fetch-Site": "cross-site",
                 "Origin": base}):
        hdr["Content-Type"] = "application/x-www-form-urlencoded"
        s, b, h = http(base + "/login", data=("token=" + sub_token).encode(),
                       headers=hdr)
        check(s == 403 and not h.get("Set-Cookie"),
              "a cross-origin login POST (%r): %d %r"
              % (hdr, s, h.get("Set-Cookie")))

    # --- the same data with the submitter's bearer token, against psql
    s, b, h = http(base + "/api/campaigns", token=sub_token)
    check(s == 200, "/api/campaigns with the submitter: %d %s" % (s, b[:300]))
    check("frame-ancestors 'none'" in h.get("Content-Security-Policy", "") and
          h.get("X-Content-Type-Options") == "nosniff",
          "security headers missing: %r" % dict(h))
    lst = {x["id"]: x for x in json.loads(b)["campaigns"]}
    check(set(lst) == {cid, hid}, "campaigns listed: %r" % sorted(lst))
    check(lst[hid]["name"] == HOSTILE_NAME, "hostile name came back as %r"
          % lst[hid]["name"])
    check(lst[cid]["evals_done"] == n and lst[cid]["state"] == "done",
          "list says %r, database %d evaluations"
          % ({k: lst[cid][k] for k in ("evals_done", "state")}, n))
    cls = lst[cid]["classes"]
    check(len(cls) == 1 and cls[0]["evals_done"] == n,
          "per-class progress: %r" % cls)
    s, b, _ = http(base + "/api/campaigns/%d/series" % cid, token=sub_token)
    series = json.loads(b)
    check(s == 200 and len(series["points"]) == n,
          "series: %d, %d points for %d evaluations"
          % (s, len(series.get("points", [])), n))
    # the compile baselines: keys in every evaluation, null where the
    # evaluation did not time them (this C campaign: no torch.compile)
    s, b, _ = http(base + "/api/campaigns/%d/evaluations" % cid,
                   token=sub_token)
    evs = json.loads(b).get("evaluations", []) if s == 200 else []
    check(evs and all(e.get("speedup_compile", 0) is None and
                      e.get("speedup_max_autotune", 0) is None for e in evs),
          "evaluations' compile baselines: %d %r" % (s, evs[:1]))
    ok_pts = [p for p in series["points"] if p["outcome"] == "ok"]
    check(ok_pts and all(p["achieved_gbps"] > 0 and p["ceiling_gbps"] > 0
                         for p in ok_pts),
          "ok points without bandwidth or ceiling: %r" % ok_pts[:2])
    t_db = c.count("SELECT (extract(epoch FROM min(created_at)) * 1000)"
                   "::bigint FROM evaluations WHERE campaign_id = %d" % cid)
    check(min(p["t_ms"] for p in series["points"]) == t_db,
          "series timestamps disagree with the store")
    s, b, _ = http(base + "/api/campaigns/999999/series", token=sub_token)
    check(s == 404, "an unknown campaign: %d %s" % (s, b[:200]))

    # --- the browser
    dport = kfe2e.free_port()
    cd = kfe2e.Proc("chromedriver", [driver, "--port=%d" % dport],
                    os.path.join(c.dir, "chromedriver.log"), c.env)
    c.procs.append(cd)

    def cd_ready():
        check(cd.alive(), "chromedriver exited %s" % cd.popen.returncode)
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/status" % dport,
                                        timeout=10) as r:
                return json.loads(r.read().decode())["value"]["ready"]
        except (OSError, ValueError):
            return False
    kfe2e.wait_until(cd_ready, 60, "chromedriver ready")
    wd = WebDriver(c, dport)
    try:
        # A wrong token: the login page again, with the refusal, no data.
        login(wd, base, "kft_" + "f" * 64)
        st = kfe2e.wait_until(lambda: (lambda s: s if s["login_error"] else
                                       None)(state(wd)), 60,
                              "the refusal on the login page")
        check("refused" in st["login_error"] and st["login_form"] == 1 and
              st["campaigns_table"] == 0 and "softmax" not in st["body_text"],
              "a wrong token: %r" % {k: st[k] for k in (
                  "login_error", "campaigns_table", "title")})
        check(not wd.cookies(), "a refused login set a cookie: %r"
              % wd.cookies())
        wd.get(base + "/")
        st = state(wd)
        check(st["login_form"] == 1 and st["campaigns_table"] == 0,
              "/ after a refused login shows %r" % st["title"])
        # A worker's token: the coordinator's roles say no.
        login(wd, base, wtok)
        st = kfe2e.wait_until(lambda: (lambda s: s if s["login_error"] else
                                       None)(state(wd)), 60,
                              "the worker token's refusal")
        check("role" in st["login_error"] and st["campaigns_table"] == 0,
              "a worker token: %r" % st["login_error"])

        # The submitter.
        login(wd, base, sub_token)

        def loaded():
            s = state(wd)
            return s if (s["loaded"] == "yes" and len(s["rows"]) == 2) else None
        st = kfe2e.wait_until(loaded, 120, "the campaign table")
        ck = wd.cookies()
        check(len(ck) == 1 and ck[0]["httpOnly"] and
              ck[0]["sameSite"] == "Strict" and sub_token not in ck[0]["value"],
              "session cookie: %r" % ck)
        # Rows whose campaign did not change are kept across a refresh
        # (a rebuild between a click's press and release loses the click).
        row_css = '#campaigns tbody tr[data-id="%d"]' % cid
        wd.js("document.querySelector(arguments[0]).kfMark = 1;", row_css)
        line = st["status_line"]
        kfe2e.wait_until(lambda: state(wd)["status_line"] != line, 60,
                         "the page's next refresh")
        check(wd.js("const e = document.querySelector(arguments[0]);"
                    "return e ? e.kfMark === 1 : null;", row_css),
              "a refresh rebuilt the campaign rows though nothing changed")
        # The newest campaign (the hostile one) is shown first; pick ours.
        wd.click(row_css)

        seen = {}

        def detail():
            s = state(wd)
            ok = (s["detail_title"] and "softmax dashboard" in s["detail_title"]
                  and s["best_points"] > 0 and s["roof_points"] > 0
                  and len(s["evals"]) == n and s["best_source"]
                  and s["ref_source"])
            # What a timeout reports: the page as last seen.
            seen.update(title=s["detail_title"], hash=s["hash"],
                        status=s["status_line"], best=s["best_points"],
                        roof=s["roof_points"], evals=len(s["evals"]),
                        want_evals=n, best_src=bool(s["best_source"]),
                        ref_src=bool(s["ref_source"]))
            return s if ok else None
        try:
            st = kfe2e.wait_until(detail, 120,
                                  "the campaign's charts and tables")
        except kfe2e.TestFailure as e:
            raise kfe2e.TestFailure("%s; the page showed %r" % (e, seen))
        rows = {r["id"]: r for r in st["rows"]}
        check(rows[cid]["name"] == "softmax dashboard" and
              rows[cid]["classes"] >= 1, "campaign row: %r" % rows[cid])
        check(rows[hid]["name"] == HOSTILE_NAME,
              "the hostile name renders as %r" % rows[hid]["name"])
        check(st["class_rows"] == 1, "per-class rows in the detail: %d"
              % st["class_rows"])
        check(st["best_paths"] >= 1 and st["ceilings"] >= 1,
              "best-so-far line %d, roofline ceilings %d"
              % (st["best_paths"], st["ceilings"]))
        check(st["roof_points"] == len([p for p in series["points"]
                                        if p["achieved_gbps"] > 0]),
              "roofline points %d" % st["roof_points"])
        bad_rows = [e for e in st["evals"] if e["outcome"] == "compile_error"]
        check(bad_rows and bad_rows[0]["stage"] == "compile" and
              hashlib.md5(bad_rows[0]["reason"].encode()).hexdigest() ==
              reason_md5,
              "the compile error's row: %r" % bad_rows)
        check(all(e["outcome"] and e["stage"] for e in st["evals"]),
              "evaluations without outcome or stage: %r" % st["evals"][:3])
        # Every ok evaluation carries the coordinator's diagnosis (a CPU
        # one from its timing alone), shown as its sentence; a failed one
        # has none.
        oks = [e for e in st["evals"] if e["outcome"] == "ok"]
        check(oks and all("-bound" in e["diagnosis"] for e in oks),
              "ok evaluations without a diagnosis: %r" % oks[:3])
        check(all(e["diagnosis"] == "\u2014" for e in bad_rows),
              "a failed evaluation with a diagnosis: %r" % bad_rows)
        best_src = c.scalar(
            "SELECT md5(c.source) FROM campaigns k JOIN candidates c ON "
            "c.id = k.best_candidate_id WHERE k.id = %d" % cid)
        check(hashlib.md5(st["best_source"].encode()).hexdigest() == best_src,
              "the best source pane is not the best candidate's source")
        ref = c.scalar("SELECT md5(reference_source) FROM campaigns "
                       "WHERE id = %d" % cid)
        check(hashlib.md5(st["ref_source"].encode()).hexdigest() == ref,
              "the reference pane is not the campaign's reference")
        # Nothing injected: no element from the names or reasons, no
        # handler ran, the only script is ours.
        check(st["injected"] == 0 and st["pwned"] is None and
              st["scripts"] == ["/static/app.js"],
              "injected: %d elements, kfPwned=%r, scripts %r"
              % (st["injected"], st["pwned"], st["scripts"]))
        check(HOSTILE_NAME in st["body_text"], "the hostile name is not "
              "shown as text")
        shot = os.path.join(artifacts, "dashboard.png")
        size = wd.screenshot(shot)
        check(size > 10000, "screenshot is %d bytes" % size)
        c.log("screenshot: %s (%d bytes)" % (shot, size))

        # The hostile campaign's own detail: its name as the title, as text.
        wd.click('#campaigns tbody tr[data-id="%d"]' % hid)
        st = kfe2e.wait_until(
            lambda: (lambda s: s if s["detail_title"] and HOSTILE_NAME in
                     s["detail_title"] else None)(state(wd)), 60,
            "the hostile campaign's detail")
        check(st["injected"] == 0 and st["pwned"] is None,
              "hostile detail injected %d, kfPwned=%r"
              % (st["injected"], st["pwned"]))

        # Revoked: the session's next call is 401 and the page goes to login.
        c.kf("token", "revoke", "--db", c.conninfo, str(sub_id))
        st = kfe2e.wait_until(
            lambda: (lambda s: s if s["login_form"] == 1 else None)(state(wd)),
            120, "the login page after the token was revoked")
        check(st["campaigns_table"] == 0, "data shown after revocation")
        s, b, _ = http(base + "/api/campaigns", token=sub_token)
        check(s == 401, "a revoked bearer token got %d" % s)
    finally:
        wd.quit()
    check_https(c, denv)
    s, b, _ = http(base + "/api/campaigns", method="PUT", data=b"")
    check(s == 405, "PUT got %d" % s)
    s, b, _ = http(base + "/api/nothing", token=sub2)
    check(s == 404 and "error" in json.loads(b), "unknown endpoint: %d" % s)
    for p in workers + [c.coord, dash]:
        check(p.alive(), "%s died" % p.name)
    # The coordinator gone: a clear 502 naming it, and the dashboard stays.
    c.coord.terminate()
    s, b, _ = http(base + "/api/campaigns", token=sub2)
    check(s == 502 and "unavailable" in json.loads(b)["error"],
          "with the coordinator stopped: %d %s" % (s, b[:300]))
    check(dash.alive(), "the dashboard died with its coordinator")
    rc = dash.terminate(grace=60)
    check(rc == 0, "kf dashboard exited %r on SIGTERM, not 0" % rc)
    check_coordinator_tls(c, denv, sub2)


if __name__ == "__main__":
    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        print("SKIP: chromium and chromium-driver are needed "
              "(scripts/setup installs them)")
        sys.exit(77)
    kfe2e.run("dashboard", body, time_limit=300)
