"""Every shipped example's box.toml loads as a box would load it."""
import subprocess
import tomllib

import pytest

from conftest import BOX, REPO

EXAMPLES = sorted((REPO / "examples").glob("*/box.toml"))


def test_there_are_examples():
    assert EXAMPLES


@pytest.mark.parametrize("config", EXAMPLES, ids=[c.parent.name for c in EXAMPLES])
def test_example_config_loads(config, tmp_path):
    # generate-schema loads the whole config (and its policy's schema) and
    # touches no box state
    r = subprocess.run([str(BOX), "policy", "generate-schema", "--config", str(config),
                        "--output-dir", str(tmp_path / "schema")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    policy = tomllib.loads(config.read_text()).get("policy")
    if policy:
        r = subprocess.run([str(BOX), "policy", "check", str(config.parent / policy)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
