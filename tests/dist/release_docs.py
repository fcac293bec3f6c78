"""What tests/dist/dist_test.py reads in the release's documents: the links
of an unpacked tarball's Markdown, the install steps of its README, and
each client package's README. Plain functions over files and text; the
checks that use them are in dist_test.py."""

import os
import re
import tarfile
import zipfile

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCED = re.compile(r"^```.*?^```", re.M | re.S)


def slug(heading):
    """GitHub's anchor for a heading (as tests/docs makes it)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(path):
    text = FENCED.sub("", open(path, encoding="utf-8").read())
    return {slug(m[1]) for m in re.finditer(r"^#+ (.*)$", text, flags=re.M)}


def relative_links(text):
    """The links of Markdown `text` to no other site, outside code blocks."""
    return [t for t in LINK.findall(FENCED.sub("", text)) if not re.match(r"[a-z]+:", t)]


def broken_links(top):
    """Every relative link of every .md under `top` that leads to no file
    under `top`, or to no heading of the .md it names."""
    bad = []
    for dirpath, _, names in os.walk(top):
        for name in (n for n in names if n.endswith(".md")):
            path = os.path.join(dirpath, name)
            where = os.path.relpath(path, top)
            for target in relative_links(open(path, encoding="utf-8").read()):
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(dirpath, file)) if file else path
                if not (dest + os.sep).startswith(top.rstrip(os.sep) + os.sep) and dest != top:
                    bad.append(f"{where}: {target} leaves the tarball")
                elif not os.path.exists(dest):
                    bad.append(f"{where}: {target}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in headings(dest):
                    bad.append(f"{where}: {target}: no such heading")
    return bad


def install_steps(readme):
    """The command lines of the tarball README's `## Install` section: its
    code blocks indented in the numbered steps, in order."""
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    return [l.strip() for l in section.splitlines() if l.startswith("       ") and l.strip()]


def package_readmes(work, names):
    """Each client package's README, where its ecosystem shows it: name ->
    (place, text or None). `names` maps wheel, sdist, npm, go, jar,
    sources_jar, gem and php to the release's file names."""

    def in_zip(name, member):
        with zipfile.ZipFile(os.path.join(work, name)) as z:
            return z.read(member).decode() if member in z.namelist() else None

    def in_tar(name, member):
        with tarfile.open(os.path.join(work, name)) as t:
            try:
                return t.extractfile(member).read().decode()
            except KeyError:
                return None

    def in_gem(name, member):
        # A .gem is a tar whose data.tar.gz holds the files.
        with tarfile.open(os.path.join(work, name)) as outer:
            with tarfile.open(fileobj=outer.extractfile("data.tar.gz")) as data:
                try:
                    return data.extractfile(member).read().decode()
                except KeyError:
                    return None

    wheel, sdist = names["wheel"], names["sdist"]
    dist_info = wheel.split("-py3-")[0] + ".dist-info"
    metadata = in_zip(wheel, f"{dist_info}/METADATA") or ""
    # The long description is the METADATA's body, after the headers.
    head, _, body = metadata.partition("\n\n")
    markdown = "Description-Content-Type: text/markdown" in head
    sdist_top = sdist[: -len(".tar.gz")]
    go_top = names["go"][: -len(".tar.gz")]
    return {
        f"{wheel}: the long description (METADATA, text/markdown)": body if markdown else None,
        f"{sdist}: {sdist_top}/README.md": in_tar(sdist, f"{sdist_top}/README.md"),
        f"{names['npm']}: package/README.md": in_tar(names["npm"], "package/README.md"),
        f"{names['go']}: {go_top}/README.md": in_tar(names["go"], f"{go_top}/README.md"),
        f"{names['jar']}: META-INF/README.md": in_zip(names["jar"], "META-INF/README.md"),
        f"{names['sources_jar']}: META-INF/README.md": in_zip(names["sources_jar"], "META-INF/README.md"),
        f"{names['gem']}: README.md": in_gem(names["gem"], "README.md"),
        f"{names['php']}: README.md": in_zip(names["php"], "README.md"),
    }
