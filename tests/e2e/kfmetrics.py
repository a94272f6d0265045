# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/kfmetrics.py -- scrape and parse a Prometheus /metrics page.

Stdlib only, plus prometheus_client's parser when it is installed
(Debian's python3-prometheus-client, from scripts/setup): the page is read
by our strict reader below AND by that independent one, and both must
accept it.

parse(text) checks the text exposition format 0.0.4 as Prometheus reads
it: every line a HELP, a TYPE or a sample; HELP and TYPE once per family
and before its samples; metric and label names well formed; label values
correctly escaped; no series twice; values are floats; counters never
negative; histograms have _bucket series with an `le` label, cumulative
counts that never decrease, a last bucket le="+Inf" equal to _count, and
a _sum.  It returns {family: {"type", "help", "samples": [(name, labels,
value)]}}.
"""
import math
import os
import re
import sys
import urllib.error
import urllib.request

from kfe2e import TestFailure, check

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*$")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


def scrape(port, path="/metrics", method="GET"):
    """(status, content type, body text) of one HTTP request."""
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 method=method,
                                 data=b"x" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), \
                r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), \
            e.read().decode("utf-8", "replace")


def _labels(s, line):
    """Parses 'a="x",b="y"' (the text between braces)."""
    out = {}
    i = 0
    while i < len(s):
        eq = s.find("=", i)
        check(eq > i, "bad label set in %r" % line)
        name = s[i:eq]
        check(LABEL.match(name), "bad label name %r in %r" % (name, line))
        check(s[eq + 1:eq + 2] == '"', "label value not quoted in %r" % line)
        j = eq + 2
        val = []
        while True:
            check(j < len(s), "unterminated label value in %r" % line)
            c = s[j]
            if c == "\\":
                nxt = s[j + 1:j + 2]
                check(nxt in ('\\', '"', 'n'), "bad escape \\%s in %r"
                      % (nxt, line))
                val.append("\n" if nxt == "n" else nxt)
                j += 2
            elif c == '"':
                break
            else:
                check(c != "\n", "newline in a label value")
                val.append(c)
                j += 1
        check(name not in out, "label %s twice in %r" % (name, line))
        out[name] = "".join(val)
        i = j + 1
        if i < len(s):
            check(s[i] == ",", "expected ',' after a label in %r" % line)
            i += 1
    return out


def _split_sample(line):
    if "{" in line:
        b = line.index("{")
        e = line.rindex("}")
        name, labels, rest = line[:b], line[b + 1:e], line[e + 1:]
    else:
        name, _, rest = line.partition(" ")
        labels, rest = "", " " + rest
    check(rest.startswith(" "), "no space before the value in %r" % line)
    parts = rest.split()
    check(len(parts) in (1, 2), "bad value/timestamp in %r" % line)
    v = parts[0]
    try:
        value = float(v)
    except ValueError:
        raise TestFailure("value %r is not a float in %r" % (v, line))
    return name, _labels(labels, line), value


def _family_of(name, fams):
    if name in fams:
        return name
    for suf in ("_bucket", "_sum", "_count"):
        if name.endswith(suf) and name[:-len(suf)] in fams and \
                fams[name[:-len(suf)]]["type"] in ("histogram", "summary"):
            return name[:-len(suf)]
    return None


def parse(text):
    check(text.endswith("\n"), "the page does not end with a newline")
    fams = {}
    seen = set()
    order = []
    for line in text.split("\n")[:-1]:
        check(line == line.strip() or line.startswith("#"),
              "stray whitespace in %r" % line)
        if not line:
            continue
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            kind = line[2:6]
            name, _, rest = line[7:].partition(" ")
            check(NAME.match(name), "bad metric name %r" % name)
            f = fams.setdefault(name, {"type": None, "help": None,
                                       "samples": []})
            if name not in order:
                order.append(name)
            check(not f["samples"], "%s for %s after its samples"
                  % (kind, name))
            if kind == "HELP":
                check(f["help"] is None, "HELP %s twice" % name)
                check(not re.search(r"\\[^\\n]", rest.replace("\\\\", "")),
                      "bad escape in HELP %s" % name)
                f["help"] = rest
            else:
                check(f["type"] is None, "TYPE %s twice" % name)
                check(rest in TYPES, "TYPE %s is %r" % (name, rest))
                f["type"] = rest
            continue
        check(not line.startswith("#"), "unknown comment %r" % line)
        name, labels, value = _split_sample(line)
        check(NAME.match(name), "bad metric name %r" % name)
        fam = _family_of(name, fams)
        check(fam is not None, "sample %r before (or without) its TYPE"
              % line)
        key = (name, tuple(sorted(labels.items())))
        check(key not in seen, "series twice: %r" % line)
        seen.add(key)
        # samples of one family stay together
        check(order and order[-1] == fam, "samples of %s are not grouped"
              % fam)
        fams[fam]["samples"].append((name, labels, value))
    for name, f in fams.items():
        check(f["type"] and f["help"] is not None,
              "%s lacks its HELP or TYPE line" % name)
        if f["type"] == "counter":
            for s in f["samples"]:
                check(s[2] >= 0 and not math.isnan(s[2]),
                      "counter %r is %r" % (s[0], s[2]))
        if f["type"] == "histogram":
            _check_histogram(name, f)
    _check_independent(text)
    return fams


def _check_histogram(name, f):
    groups = {}
    for n, labels, v in f["samples"]:
        rest = {k: x for k, x in labels.items() if k != "le"}
        key = tuple(sorted(rest.items()))
        g = groups.setdefault(key, {"buckets": [], "sum": None,
                                    "count": None})
        if n == name + "_bucket":
            check("le" in labels, "%s_bucket without le" % name)
            le = float(labels["le"])
            g["buckets"].append((le, v))
        elif n == name + "_sum":
            g["sum"] = v
        elif n == name + "_count":
            g["count"] = v
        else:
            raise TestFailure("histogram %s has a sample %s" % (name, n))
    check(groups, "histogram %s has no samples" % name)
    for key, g in groups.items():
        b = g["buckets"]
        check(b and b[-1][0] == math.inf, "%s%r: last bucket is not +Inf"
              % (name, key))
        les = [x[0] for x in b]
        check(les == sorted(les) and len(set(les)) == len(les),
              "%s%r: le bounds not strictly ascending: %r" % (name, key, les))
        counts = [x[1] for x in b]
        check(all(a <= c for a, c in zip(counts, counts[1:])),
              "%s%r: cumulative bucket counts decrease: %r"
              % (name, key, counts))
        check(g["count"] is not None and g["sum"] is not None,
              "%s%r: _count or _sum missing" % (name, key))
        check(counts[-1] == g["count"], "%s%r: +Inf bucket %r != _count %r"
              % (name, key, counts[-1], g["count"]))
        check(g["sum"] >= 0, "%s%r: negative _sum" % (name, key))


_PARSER = []


def independent_parser():
    """prometheus_client's text parser, or None when not installed.  Also
    looks in Debian's dist-packages: ctest may run another python3 (a
    pyenv one) that does not see python3-prometheus-client (pure Python)."""
    if not _PARSER:
        fn = None
        for extra in (None, "/usr/lib/python3/dist-packages"):
            if extra:
                if not os.path.isdir(extra) or extra in sys.path:
                    continue
                sys.path.append(extra)
            try:
                from prometheus_client.parser import \
                    text_string_to_metric_families as fn
                break
            except ImportError:
                fn = None
        _PARSER.append(fn)
        print("kfmetrics: prometheus_client's parser %s" % (
            "also reads every page" if fn else
            "is not installed: only the strict reader runs"), flush=True)
    return _PARSER[0]


def _check_independent(text):
    text_string_to_metric_families = independent_parser()
    if text_string_to_metric_families is None:
        return
    try:
        fams = list(text_string_to_metric_families(text))
    except Exception as e:  # any parse error is the page's
        raise TestFailure("prometheus_client cannot parse the page: %s" % e)
    check(fams, "prometheus_client found no metric family")


def value(fams, family, sample=None, **labels):
    """The one sample of `family` (sample name: family unless given) whose
    labels include `labels`; fails if none or several match."""
    f = fams.get(family)
    check(f is not None, "no family %s" % family)
    name = sample or family
    hits = [s for s in f["samples"] if s[0] == name and
            all(s[1].get(k) == str(v) for k, v in labels.items())]
    check(len(hits) == 1, "%d samples of %s%r" % (len(hits), name, labels))
    return hits[0][2]


def total(fams, family, sample=None, **labels):
    """Sum of the samples of `family` matching `labels` (0 when none)."""
    f = fams.get(family)
    check(f is not None, "no family %s" % family)
    name = sample or family
    return sum(s[2] for s in f["samples"] if s[0] == name and
               all(s[1].get(k) == str(v) for k, v in labels.items()))
