"""The Ruby gem of the release (rl-<version>.gem), as a user gets it, for
tests/dist/dist_test.py: docs/install.md's `gem install` line, as written,
into a GEM_HOME of the test's own, then a Rack app with rl_throttle served
by thin limiting over HTTP, with the module and with the library. `t` is
dist_test itself, for its helpers (Server, check, run, ...)."""

import os
import shutil
import subprocess
import tempfile


def gem_limits_a_rack_app(work, t):
    folder = tempfile.mkdtemp(prefix="ruby-", dir=work)
    shutil.copy(os.path.join(work, t.GEM), folder)
    # docs/install.md's line, into a GEM_HOME of the test's own; the app
    # also sees the system's gems (Debian's rack-attack, redis-rb, thin).
    home = os.path.join(folder, "gems")
    system = t.run(["ruby", "-e", "print Gem.default_path.join(':')"], folder)
    env = dict(os.environ, GEM_HOME=home, GEM_PATH=f"{home}:{system}")
    (where, lines), = t.documented_lines("gem install")
    t.shell(next(l for l in lines if l.startswith("gem install")), folder, env=env)
    installed = os.path.join(home, "gems", f"rl-{t.VERSION}")
    t.check(open(os.path.join(installed, t.LUA), "rb").read() == open(os.path.join(work, t.LUA), "rb").read(),
          f"the installed gem's {t.LUA} is not the release's")
    with open(os.path.join(folder, "config.ru"), "w") as f:
        f.write(t.RACK_APP)
    for edition in ("module", "functions"):
        server = t.Server("Valkey 9.1", work, t.config_with_module(work, "redis") if edition == "module" else "")
        try:
            if edition == "functions":
                server.cli("-x", "FUNCTION", "LOAD", stdin=open(os.path.join(work, t.LUA)).read())
            port = t.free_port()
            app_env = dict(env, REDIS_URL=f"redis://127.0.0.1:{server.port}")
            log = open(os.path.join(folder, f"thin-{port}.log"), "w+")
            proc = subprocess.Popen(["thin", "start", "-R", "config.ru", "-a", "127.0.0.1", "-p", str(port)],
                                    cwd=folder, env=app_env, stdout=log, stderr=subprocess.STDOUT)
            try:
                codes = t.http_statuses(port, 5, proc)
            except t.Failure as e:
                log.seek(0)
                raise t.Failure(f"{e}:\n{log.read()[-3000:]}")
            finally:
                proc.kill()
                proc.wait()
            t.check(codes == [200, 200, 200, 429, 429], f"thin + rl_throttle ({edition}): statuses {codes}")
        finally:
            server.stop()
