"""pytest plugin of the docs step: every fenced block of the Markdown files given to pytest is a
test, run as a user runs it, on the release artifacts of dist/ (ci/docs.sh sets it up).

How a block is marked is in blocks.py. Each document runs in a folder of its own, in order,
after the blocks marked `setup` of every document (the README's first steps: the server on
127.0.0.1:7379 and its users, which every Segments example uses). What a document's folder holds
before its first block is what its reader has at that point: the README's and each guide's in
docs/, every release artifact, the two jars the JVM pages name and the programs (`file=` blocks)
any of them shows; python/README.md's, the wheel; node/README.md's,
the npm tarball; the C and PostgreSQL tarballs' READMEs run inside their unpacked tarballs.

Languages: `sh` runs with bash -e -o pipefail; `python` with the folder's .venv (its Install
block makes it); `js` as CommonJS and `mjs` as an ES module with node; `ts` through `tsc --strict
--noEmit` of every TypeScript of IDFORGE_DOCS_TYPESCRIPTS, as a .ts file and as an ES module
(.mts, --module nodenext); `kotlin` compiled with kotlinc against the release jar and run with
java; `rust` built and run as a binary depending on the runtime crate of the local cargo registry;
`sql` through psql, in a
database of its own per document, on a PostgreSQL cluster the step starts with the lines of the
document's `file=postgresql.conf` block; `go` built and run as the main.go of a module of its own
that requires idforge.dev/idforge of the release from the local module proxy (the module carries
the C library), with a Go cache of the session's own; pip and npm install from the local
registries (ci/release/registries.sh: IDFORGE_PYPI_INDEX, IDFORGE_NPM_REGISTRY,
IDFORGE_CARGO_INDEX, IDFORGE_GO_PROXY_DIR);
`c` and `java` blocks are files (`file=`) that a shell block of the document compiles and runs.

Environment (ci/docs.sh sets it): IDFORGE_DOCS_DIST (the artifacts), IDFORGE_DOCS_TYPESCRIPTS
(tsc paths, colon-separated), IDFORGE_DOCS_KOTLINC, IDFORGE_DOCS_JNA, IDFORGE_DOCS_KOTLIN_STDLIB,
IDFORGE_DOCS_PG_PORT (25440), IDFORGE_DOCS_CARGO_TARGET (the rust blocks' target dir),
IDFORGE_DOCS_GO (the go binary).
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from blocks import Block, MarkError, read_blocks  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
BLOCK_TIMEOUT = 600  # seconds: a block that builds (rust, npm install) may take minutes cold


def env(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise pytest.UsageError(f"{name} is not set (run the docs step with ci/docs.sh)")
    return value


class BlockFailed(Exception):
    """A block that did not run as written: what ran, and what it printed."""


# ---- the session: the sandbox, the documents' folders, what was started ------------------------


class Docs:
    """Everything the blocks of one session share, and what it started (stopped by PID)."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="idforge-docs-"))
        self.dist = Path(env("IDFORGE_DOCS_DIST", str(REPO / "dist"))).resolve()
        h = (REPO / "include/idforge.h").read_text()
        self.version = re.search(r'#define IDFORGE_VERSION_STRING "(.*)"', h).group(1)
        self.home = self.root / "home"
        self.bin = self.root / "bin"
        self._guide_files: dict[str, str] | None = None
        for d in (self.home, self.bin):
            d.mkdir()
        # The server and command line, unpacked as the Install section says, on PATH as if
        # installed to /usr/local/bin (that install, with sudo and systemd, is a fragment).
        server = self.artifact(f"idforge-{self.version}-x86_64-linux.tar.gz")
        with tarfile.open(server) as t:
            t.extractall(self.root, filter="data")
        self.server_dir = self.root / f"idforge-{self.version}-x86_64-linux"
        if os.geteuid() == 0 and not shutil.which("sudo"):
            # A root CI machine has no sudo: the blocks' `sudo` runs the command itself.
            sudo = self.bin / "sudo"
            sudo.write_text('#!/bin/sh\nexec "$@"\n')
            sudo.chmod(0o755)
        tools = [os.path.dirname(p) for p in (shutil.which("node"), shutil.which("java")) if p]
        self.path = ":".join([str(self.bin), str(self.server_dir), *tools, SYSTEM_PATH])
        self.folders: dict[Path, Path] = {}
        self.background: list[subprocess.Popen] = []
        self.pg: Postgres | None = None
        self.counts: Counter[str] = Counter()

    def artifact(self, name: str) -> Path:
        p = self.dist / name
        if not p.is_file():
            raise pytest.UsageError(f"no {p}: build the release artifacts first (ci/dist/dist.sh)")
        return p

    def environ(self, cwd: Path, doc: Path) -> dict[str, str]:
        """A user's environment: system PATH plus the installed idforge, a scratch HOME."""
        e = {
            "PATH": self.path,
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            # Caches only: what is fetched is what a user fetches, once.
            "npm_config_cache": os.environ.get("IDFORGE_DOCS_NPM_CACHE", str(self.home / ".npm")),
            "PIP_CACHE_DIR": os.environ.get("IDFORGE_DOCS_PIP_CACHE", str(self.home / ".cache/pip")),
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            # The registries idforge is installed from by name (ci/release/registries.sh): the
            # settings of a user whose company mirrors PyPI and npm. verdaccio proxies every other
            # npm package from the npm registry.
            "PIP_INDEX_URL": env("IDFORGE_PYPI_INDEX"),
            "npm_config_registry": env("IDFORGE_NPM_REGISTRY"),
            # Every run publishes the same version anew: revalidate what the shared cache holds.
            "npm_config_prefer_online": "true",
        }
        # Where a user who moved rustup's or cargo's home keeps it (else both follow HOME).
        e.update({k: os.environ[k] for k in ("RUSTUP_HOME", "CARGO_HOME") if k in os.environ})
        if self.pg is not None:
            e.update(self.pg.environ(doc))
        return e

    def folder(self, doc: Path, blocks: list[Block]) -> Path:
        """DOC's folder, staged on first use with what its reader has, and its `file=` blocks."""
        if doc in self.folders:
            return self.folders[doc]
        rel = doc.resolve().relative_to(REPO)
        work = self.root / str(rel).replace("/", "_").removesuffix(".md")
        work.mkdir()
        v = self.version
        if rel == Path("README.md") or rel.parts[0] == "docs":
            # The README and its guides: every artifact, the two jars the JVM pages name, and
            # the programs any of them shows (the Install page builds the README's app.c).
            for p in sorted(self.dist.iterdir()):
                if p.name != "SHA256SUMS" and p.is_file():
                    link_or_copy(p, work / p.name)
            shutil.copy(env("IDFORGE_DOCS_JNA"), work / "jna.jar")
            shutil.copy(env("IDFORGE_DOCS_KOTLIN_STDLIB"), work / "kotlin-stdlib.jar")
            for name, text in self.guide_files().items():
                (work / name).write_text(text)
        elif rel == Path("python/README.md"):
            shutil.copy(self.artifact(f"idforge-{v}-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"), work)
        elif rel == Path("node/README.md"):
            shutil.copy(self.artifact(f"idforge-{v}.tgz"), work)
        elif rel == Path("packaging/c/README.md"):
            with tarfile.open(self.artifact(f"idforge-c-{v}-x86_64-linux-gnu.tar.gz")) as t:
                t.extractall(work, filter="data")
        elif rel == Path("packaging/postgres/README.md"):
            name = f"idforge-postgres-{v}-pg15-x86_64-linux-gnu"
            with tarfile.open(self.artifact(f"{name}.tar.gz")) as t:
                t.extractall(work, filter="data")
            work = work / name  # its blocks run where install.sh is
        for b in blocks:
            if "file" in b.words and b.fragment is None and b.words["file"] != "postgresql.conf":
                (work / b.words["file"]).write_text(self.text(b))
        self.folders[doc] = work
        return work

    def guide_files(self) -> dict[str, str]:
        """The `file=` blocks of the README and docs/*.md, by name (one text per name)."""
        if self._guide_files is None:
            files: dict[str, str] = {}
            for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
                for b in read_blocks(doc):
                    name = b.words.get("file")
                    if name is None or b.fragment is not None or name == "postgresql.conf":
                        continue
                    if files.setdefault(name, self.text(b)) != self.text(b):
                        raise pytest.UsageError(f"two different file={name} blocks in the guides")
            self._guide_files = files
        return self._guide_files

    def text(self, b: Block) -> str:
        """The block as the reader runs it: the word VERSION is the release's."""
        return b.text.replace("VERSION", self.version)

    def close(self) -> None:
        for p in self.background:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        if self.pg is not None:
            self.pg.stop()
        if not os.environ.get("IDFORGE_DOCS_KEEP"):
            shutil.rmtree(self.root, ignore_errors=True)


def link_or_copy(src: Path, dst: Path) -> None:
    """A hard link (the artifacts are read, never written, by the blocks), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy(src, dst)


class Postgres:
    """A PostgreSQL 15 cluster of the session's, on 127.0.0.1, for the `sql` blocks."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "pg"
        self.port = env("IDFORGE_DOCS_PG_PORT", "25440")
        self.bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
        self.dir.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            shutil.chown(root, "postgres")  # the postgres user must reach its folder
            os.chmod(root, 0o755)
        self.run("initdb", "-D", str(self.dir / "data"), "--auth=trust", "-U", "postgres")
        self.conf_lines = [f"port = {self.port}", "listen_addresses = '127.0.0.1'",
                           f"unix_socket_directories = '{self.dir}'"]
        self.running = False
        self.databases: set[str] = set()

    def run(self, tool: str, *args: str) -> str:
        cmd = [f"{self.bindir}/{tool}", *args]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise BlockFailed(f"{tool} failed:\n{r.stdout}{r.stderr}")
        return r.stdout

    def configure(self, lines: str) -> None:
        """Adds LINES to postgresql.conf and (re)starts the cluster, as its reader does."""
        self.conf_lines.append(lines)
        (self.dir / "data/postgresql.auto.conf").write_text("\n".join(self.conf_lines) + "\n")
        if self.running:
            self.run("pg_ctl", "-D", str(self.dir / "data"), "-w", "stop")
        self.start()

    def start(self) -> None:
        self.run("pg_ctl", "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), "-w", "-t", "60", "start")
        self.running = True

    def database(self, doc: Path) -> str:
        name = "docs_" + re.sub(r"\W", "_", str(doc.resolve().relative_to(REPO))).lower()
        if name not in self.databases:
            self.run("createdb", "-h", "127.0.0.1", "-p", self.port, "-U", "postgres", name)
            self.databases.add(name)
        return name

    def environ(self, doc: Path) -> dict[str, str]:
        return {"PGHOST": "127.0.0.1", "PGPORT": self.port, "PGUSER": "postgres", "PGDATABASE": self.database(doc)}

    def stop(self) -> None:
        if self.running:
            try:
                self.run("pg_ctl", "-D", str(self.dir / "data"), "-w", "-m", "fast", "stop")
            except BlockFailed:
                pass


DOCS_KEY = pytest.StashKey[Docs]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "docs_setup: a block run before every other")


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[DOCS_KEY] = Docs()


def pytest_sessionfinish(session: pytest.Session) -> None:
    docs = session.config.stash.get(DOCS_KEY, None)
    if docs is not None:
        docs.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if file_path.suffix == ".md":
        return MarkdownFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The setup blocks first (stable: in document order), then every document in order.
    items.sort(key=lambda i: 0 if isinstance(i, BlockItem) and "setup" in i.block.words else 1)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    docs = config.stash.get(DOCS_KEY, None)
    if docs is None:
        return
    c = docs.counts
    ran = sum(n for k, n in c.items() if k.startswith("ran "))
    frag = sum(n for k, n in c.items() if k.startswith("fragment "))
    terminalreporter.write_sep("=", f"docs: {ran} blocks run, {frag} marked as fragments")
    for k in sorted(c):
        terminalreporter.write_line(f"  {c[k]:3d}  {k}")


class MarkdownFile(pytest.File):
    def collect(self):
        try:
            blocks = read_blocks(self.path)
        except MarkError as e:
            raise self.CollectError(str(e)) from None
        for b in blocks:
            yield BlockItem.from_parent(self, name=f"L{b.line}-{b.lang or 'plain'}", block=b, blocks=blocks)


class BlockItem(pytest.Item):
    def __init__(self, *, block: Block, blocks: list[Block], **kw) -> None:
        super().__init__(**kw)
        self.block = block
        self.blocks = blocks

    def reportinfo(self):
        return self.path, self.block.line - 1, f"{self.path.name}:{self.block.line} ```{self.block.lang}"

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, BlockFailed):
            return f"{self.path}:{self.block.line}: ```{self.block.lang} block:\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def runtest(self) -> None:
        docs: Docs = self.config.stash[DOCS_KEY]
        b = self.block
        if b.fragment is not None:
            check_fragment(b)
            docs.counts[f"fragment {b.lang}"] += 1
            return
        runner = RUNNERS.get(b.lang)
        if runner is None:
            raise BlockFailed(f"no runner for ```{b.lang}: mark it `fragment: WHY` or teach ci/docs/docs_plugin.py")
        work = docs.folder(self.path, self.blocks)
        out = runner(docs, b, work, self.path, self.blocks)
        if b.output is not None:
            compare_output(b.output, out or "")
        docs.counts[f"ran {b.lang}"] += 1


# ---- checks and runners ------------------------------------------------------------------------


def check_fragment(b: Block) -> None:
    """A fragment is not run; what can be checked of it is."""
    if b.lang == "sh":
        r = subprocess.run(["bash", "-n"], input=b.text, capture_output=True, text=True)
        if r.returncode != 0:
            raise BlockFailed(f"bash -n: {r.stderr}")
    elif b.lang == "go" and os.environ.get("IDFORGE_DOCS_GO"):
        gofmt = Path(os.environ["IDFORGE_DOCS_GO"]).parent / "gofmt"
        r = subprocess.run([str(gofmt), "-e"], input=b.text, capture_output=True, text=True)
        if r.returncode != 0:
            raise BlockFailed(f"gofmt -e: {r.stderr}")
    elif b.lang == "xml":
        try:
            ET.fromstring(b.text)
        except ET.ParseError as e:
            raise BlockFailed(f"not well-formed XML: {e}") from None


def compare_output(want: str, got: str) -> None:
    checker = doctest.OutputChecker()
    if not checker.check_output(want, got, doctest.ELLIPSIS):
        raise BlockFailed(f"the output differs from the block under it\n--- shown:\n{want}--- printed:\n{got}")


def run(cmd: list[str], docs: Docs, work: Path, doc: Path, b: Block, extra_env: dict[str, str] | None = None) -> str:
    e = docs.environ(work, doc)
    if extra_env:
        e.update(extra_env)
    try:
        r = subprocess.run(cmd, cwd=work, env=e, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise BlockFailed(f"{' '.join(cmd)}: no end within {BLOCK_TIMEOUT} s\n{docs.text(b)}") from None
    if r.returncode != 0:
        raise BlockFailed(f"{' '.join(cmd)} exited {r.returncode} in {work}\n--- block:\n{docs.text(b)}"
                          f"--- stdout:\n{r.stdout}--- stderr:\n{r.stderr}")
    return r.stdout


def write(work: Path, b: Block, docs: Docs, name: str | None = None) -> Path:
    p = work / (name or b.name)
    p.write_text(docs.text(b))
    return p


def run_sh(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    if b.words.get("prepare") == "store":
        data = prepare_store(docs, work, doc)
        b = Block(b.path, b.line, b.lang, b.words, None, b.text.replace("/var/lib/idforge", str(data)), b.output)
    elif "prepare" in b.words:
        raise BlockFailed(f"unknown prepare={b.words['prepare']}")
    script = write(work, b, docs)
    if "background" in b.words:
        return start_background(docs, b, work, doc, script)
    return run(["bash", "-e", "-o", "pipefail", script.name], docs, work, doc, b)


def start_background(docs: Docs, b: Block, work: Path, doc: Path, script: Path) -> str:
    """Starts a server block and waits until its port (--port, else 7379) takes connections."""
    m = re.search(r"--port[ =](\d+)", b.text)
    port = int(m.group(1)) if m else 7379
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", port)) == 0:
            raise BlockFailed(f"port {port} is taken before the block starts: stop what listens there")
    log = open(work / f"{script.stem}.log", "w")
    p = subprocess.Popen(["bash", "-e", script.name], cwd=work, env=docs.environ(work, doc),
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    docs.background.append(p)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise BlockFailed(f"exited {p.returncode} at once:\n{(work / log.name).read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return ""
        time.sleep(0.1)
    raise BlockFailed(f"nothing listens on 127.0.0.1:{port} after 60 s")


def prepare_store(docs: Docs, work: Path, doc: Path) -> Path:
    """A data dir a server has served from and stopped on (what `idforge store` is run on)."""
    data = work / "var/lib/idforge"
    if data.exists():
        return data
    data.mkdir(parents=True)
    port_file = work / "prepare.port"
    e = docs.environ(work, doc)
    p = subprocess.Popen([str(docs.server_dir / "idforge"), "serve", "--data-dir", str(data), "--port", "0",
                          "--port-file", str(port_file)], cwd=work, env=e,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        port = port_file.read_text().strip()
        subprocess.run(["redis-cli", "-p", port, "INCRBY", "orders", "100"], env=e, check=True, capture_output=True)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)
    return data


def run_python(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    python = work / ".venv/bin/python"
    if not python.exists():
        raise BlockFailed("no .venv in the document's folder: a block before this one must make it")
    return run([str(python), write(work, b, docs).name], docs, work, doc, b)


def run_node(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    return run(["node", write(work, b, docs).name], docs, work, doc, b)


def run_ts(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    """tsc --strict on the block as a user's .ts file (TypeScript's defaults) and as an ES module."""
    tscs = [t for t in env("IDFORGE_DOCS_TYPESCRIPTS").split(":") if t]
    name = Path(b.name).stem
    for tsc in tscs:
        write(work, b, docs, f"{name}.ts")
        run([tsc, "--strict", "--noEmit", f"{name}.ts"], docs, work, doc, b)
        write(work, b, docs, f"{name}.mts")
        run([tsc, "--strict", "--noEmit", "--module", "nodenext", "--target", "es2022", f"{name}.mts"], docs, work, doc, b)
    return ""


def run_kotlin(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    """Compiled with kotlinc against the release jar, run with java and the jars a user has."""
    if "file" not in b.words:
        raise BlockFailed("a kotlin block that runs needs file=NAME.kt (its main class is NAMEKt)")
    src = write(work, b, docs)
    jar = f"idforge-jvm-{docs.version}.jar"
    run([env("IDFORGE_DOCS_KOTLINC"), "-nowarn", "-jvm-target", "17", "-cp", jar, src.name, "-d", f"{src.stem}.jar"],
        docs, work, doc, b)
    main = src.stem[0].upper() + src.stem[1:] + "Kt"
    return run(["java", "-cp", f"{jar}:jna.jar:kotlin-stdlib.jar:{src.stem}.jar", main], docs, work, doc, b)


def run_rust(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    """Built as the binary of a crate depending on the runtime (`idforge`) of the local cargo
    registry (ci/release/registries.sh), as `cargo add idforge` writes it."""
    crate = work / f"rust-{b.line}"
    (crate / "src").mkdir(parents=True)
    (crate / ".cargo").mkdir()
    (crate / ".cargo/config.toml").write_text(
        f'[registries.idforge-local]\nindex = "{env("IDFORGE_CARGO_INDEX")}"\n')
    (crate / "Cargo.toml").write_text(
        f'[package]\nname = "readme-{b.line}"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
        f'[dependencies]\nidforge = {{ version = "{docs.version}", registry = "idforge-local" }}\n\n[workspace]\n')
    # The checkout's lock: the versions its tests ran with (cargo moves idforge's own entries to
    # the registry).
    shutil.copy(REPO / "Cargo.lock", crate / "Cargo.lock")
    write(crate, b, docs, "src/main.rs")
    e = {"PATH": os.environ["PATH"], "CARGO_TARGET_DIR": env("IDFORGE_DOCS_CARGO_TARGET"),
         "HOME": os.environ.get("HOME", "")}
    if "CARGO_HOME" in os.environ:
        e["CARGO_HOME"] = os.environ["CARGO_HOME"]
    return run(["cargo", "run", "-q"], docs, crate, doc, b, e)


def run_go(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    """Built and run as the main.go of a module that requires idforge.dev/idforge of the release,
    from the module proxy of ci/release/registries.sh (GOPROXY=file://…): the module carries the
    C library, so only the Go toolchain and a C compiler are needed (no PKG_CONFIG_PATH)."""
    if "file" in b.words:
        return run_file(docs, b, work, doc, blocks)
    go = Path(env("IDFORGE_DOCS_GO"))
    module = work / f"go-{b.line}"
    module.mkdir()
    (module / "go.mod").write_text(
        f"module example.com/readme{b.line}\n\ngo 1.24\n\nrequire idforge.dev/idforge v{docs.version}\n")
    write(module, b, docs, "main.go")
    e = {"PATH": f"{go.parent}:{docs.path}", "GOCACHE": str(docs.root / "go-cache"),
         "GOPATH": str(docs.root / "go-path"), "GOPROXY": f"file://{env('IDFORGE_GO_PROXY_DIR')}",
         "GOSUMDB": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOTELEMETRY": "off"}
    return run(["go", "run", "."], docs, module, doc, b, e)


def run_sql(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    if docs.pg is None:
        raise BlockFailed("no PostgreSQL cluster: a `file=postgresql.conf` block must come first")
    return run(["psql", "-X", "-v", "ON_ERROR_STOP=1", "-f", write(work, b, docs).name], docs, work, doc, b)


def run_ini(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    if b.words.get("file") != "postgresql.conf":
        raise BlockFailed("an ini block that runs is `file=postgresql.conf` (the lines go to a cluster's)")
    if docs.pg is None:
        docs.pg = Postgres(docs.root)
    docs.pg.configure(b.text)
    return ""


def run_file(docs: Docs, b: Block, work: Path, doc: Path, blocks: list[Block]) -> str:
    """A `c` or `java` block is a file: a shell block that runs must use it, of the document, or
    for the README and its guides in docs/ (which share their programs), of any of them."""
    name = b.words.get("file")
    if not name:
        raise BlockFailed(f"a ```{b.lang} block is a file the document's shell blocks build: mark it file=NAME")
    rel = doc.resolve().relative_to(REPO)
    if rel == Path("README.md") or rel.parts[0] == "docs":
        guides = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        blocks = [o for g in guides for o in read_blocks(g)]
    users = [o for o in blocks if o.lang == "sh" and o.fragment is None and re.search(rf"(^|[\s/]){re.escape(name)}\b", o.text)]
    if not users:
        raise BlockFailed(f"no shell block that runs names {name}")
    return ""


RUNNERS = {
    "sh": run_sh,
    "python": run_python,
    "js": run_node,
    "mjs": run_node,
    "ts": run_ts,
    "kotlin": run_kotlin,
    "rust": run_rust,
    "go": run_go,
    "sql": run_sql,
    "ini": run_ini,
    "c": run_file,
    "java": run_file,
}
