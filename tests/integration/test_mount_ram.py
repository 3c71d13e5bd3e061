"""The Shell's RAM areas.  Per command by default (covered
in test_first_box.py); per box with `[agent] ram = "box"`: what one command
writes under /tmp is there for the next, and never on the host.  The size
(`ram_size`) and inode (`ram_inodes`) limits of an area give ENOSPC."""
import os
import time


def start(box, extra):
    box.write_policy('permit(principal, action, resource);\n')
    box.write_config(extra="")
    text = box.config.read_text()
    # the [agent] keys go right after the agent's workspace line
    marker = f'workspace = "{box.workspace}"\n'
    box.config.write_text(text.replace(marker, marker + extra, 1))
    box.start()


def test_per_box_area_outlives_commands(box):
    start(box, 'ram = "box"\n')
    name = f"/tmp/boxfs-perbox-{os.getpid()}-{time.time_ns()}"
    r = box.bash(f"mkdir -p {name}.d && echo kept > {name}")
    assert r.returncode == 0, r.stderr
    r = box.bash(f"cat {name}; ls -d {name}.d")
    assert (r.returncode, r.stdout) == (0, f"kept\n{name}.d\n"), r.stderr
    r = box.bash(f"rm {name} && cat {name}")
    assert r.returncode == 1 and name in r.stderr
    assert box.bash(f"cat {name}").returncode == 1
    assert not os.path.exists(name) and not os.path.exists(name + ".d")


def test_per_command_area_is_the_default(box):
    start(box, 'ram = "command"\n')
    assert box.bash("echo a > /tmp/p").returncode == 0
    assert box.bash("cat /tmp/p").returncode == 1


def test_size_limit_gives_enospc(box):
    start(box, 'ram = "box"\nram_size = "64K"\n')
    r = box.bash("head -c 40000 /dev/zero > /tmp/a && echo ok")
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr
    r = box.bash("head -c 40000 /dev/zero > /tmp/b")
    assert r.returncode != 0
    assert "No space left on device" in r.stderr
    # freeing space makes room again
    r = box.bash("rm /tmp/a /tmp/b && head -c 60000 /dev/zero > /tmp/c && wc -c < /tmp/c")
    assert (r.returncode, r.stdout.strip()) == (0, "60000"), r.stderr


def test_size_limit_per_command_area(box):
    start(box, 'ram_size = "16K"\n')
    r = box.bash("head -c 20000 /dev/zero > /tmp/a")
    assert r.returncode != 0 and "No space left on device" in r.stderr
    # a new command has a new, empty area
    r = box.bash("head -c 10000 /dev/zero > /tmp/a && wc -c < /tmp/a")
    assert (r.returncode, r.stdout.strip()) == (0, "10000"), r.stderr


def test_inode_limit_gives_enospc(box):
    start(box, 'ram = "box"\nram_inodes = 40\n')
    r = box.bash('i=0; while [ $i -lt 100 ]; do i=$((i+1)); : > /tmp/f$i || { echo stopped $i; break; }; done')
    assert "No space left on device" in r.stderr, r.stderr
    stopped = int(r.stdout.split()[-1])
    assert 2 < stopped < 40
    # the files made before the limit are all there, in the next command too
    r = box.bash("ls /tmp | grep -c '^f[0-9]'")
    assert int(r.stdout.strip()) == stopped - 1


def test_bad_ram_keys_are_refused(box):
    box.write_policy('permit(principal, action, resource);\n')
    for extra, text in [('ram = "forever"\n', '`agent.ram` is invalid'),
                        ('ram_size = "lots"\n', '`agent.ram_size` is invalid'),
                        ('ram_inodes = 3\n', '`agent.ram_inodes` is invalid')]:
        box.write_config()
        marker = f'workspace = "{box.workspace}"\n'
        box.config.write_text(box.config.read_text().replace(marker, marker + extra, 1))
        assert box.run_to_end() == 1
        assert text in box.stderr(), box.stderr()
