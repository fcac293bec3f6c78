"""make dist's docs step: `docs.py <folder> <version>` copies the documents a
release user needs into a module tarball's folder, laid out as in the
repository so that CHANGELOG.md's `docs/...` links and the docs' links to
each other resolve as they are:

    CHANGELOG.md  docs/*.md  docs/perf/*.svg  contrib/**
    docs/README.md    the repository's README (the docs link to its
                      install, ACL, Cluster and upgrade sections)

`docs.py --page <source> <dest> <folder>` ships one page alone, the
repository's <source> as <folder>/<dest> (rl-ratelimit's tarballs:
docs/envoy.md as envoy.md): its links to its own headings keep working, its
links to other files of the repository lose their target.

A link to a file the tarball does not hold (a source folder, a test) keeps
its text and loses its target: a release user has no checkout to follow it
into. Links inside fenced code blocks are left alone. tests/dist checks
that every relative link of the unpacked tarball leads to a file and
heading it holds."""

import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"(!?\[[^\]]*\])\(([^)\s]+)\)")
FENCE = re.compile(r"^(```.*?^```[^\n]*$)", re.M | re.S)
README_NOTE = """\
> This is the rl repository's README, shipped with release {version} for its
> reference sections (installing into a server, ACL, Cluster, memory,
> upgrading, the commands). Its `make` targets need a checkout of the
> sources; with the release, follow [../README.md](../README.md).

"""


def shipped_files():
    """Repository path -> path in the tarball, for every shipped file."""
    out = {"CHANGELOG.md": "CHANGELOG.md", "README.md": "docs/README.md"}
    for folder in ("docs", "contrib"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
            for name in names:
                path = os.path.relpath(os.path.join(dirpath, name), ROOT)
                if folder == "docs" and not name.endswith((".md", ".svg")):
                    continue
                out[path] = path
    # Already in the tarball (dist.sh puts them there).
    for name in ("LICENSE", "redis.conf.example"):
        out[name] = name
    return out


def rewrite_links(text, source, shipped_at, shipped):
    """`text` of repository file `source`, to be shipped at `shipped_at`."""

    def one(m):
        label, target = m[1], m[2]
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            return m[0]  # another site, or a heading of this file
        file, _, anchor = target.partition("#")
        repo_path = os.path.normpath(os.path.join(os.path.dirname(source), file))
        if repo_path not in shipped:
            return label[1:-1] if not label.startswith("!") else label[2:-1]
        new = os.path.relpath(shipped[repo_path], os.path.dirname(shipped_at) or ".")
        return f"{label}({new}{'#' + anchor if anchor else ''})"

    parts = FENCE.split(text)
    # Odd parts are fenced blocks: code, left as written.
    return "".join(p if i % 2 else LINK.sub(one, p) for i, p in enumerate(parts))


def ship(folder, source, dest, shipped, version=None):
    """Repository file `source` written as `folder`/`dest`, its links
    rewritten for the files `shipped` maps."""
    target = os.path.join(folder, dest)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    parts = dest.split("/")[:-1]
    for i in range(len(parts)):
        os.chmod(os.path.join(folder, *parts[: i + 1]), 0o755)
    if not source.endswith(".md"):
        shutil.copyfile(os.path.join(ROOT, source), target)
    else:
        text = open(os.path.join(ROOT, source), encoding="utf-8").read()
        text = rewrite_links(text, source, dest, shipped)
        if source == "README.md":
            text = README_NOTE.format(version=version) + text
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    # Fixed modes, whatever the umask: the same sources give the same tarball.
    os.chmod(target, 0o644)


def main(folder, version):
    shipped = shipped_files()
    for source, dest in sorted(shipped.items()):
        if source in ("LICENSE", "redis.conf.example"):
            continue
        ship(folder, source, dest, shipped, version)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--page":
        ship(sys.argv[4], sys.argv[2], sys.argv[3], {sys.argv[2]: sys.argv[3]})
    elif len(sys.argv) == 3:
        main(sys.argv[1], sys.argv[2])
    else:
        sys.exit("usage: docs.py <folder> <version> | docs.py --page <source> <dest> <folder>")
