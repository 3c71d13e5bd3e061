"""An error message costs no file access: the Shell's messages come from
the C library as they are (bash's), not converted through iconv, whose
first use would read charset tables under /usr, which a worker rooted in
the mount does not have (each probe a refused fs:read in the log)."""


def test_a_missing_file_is_reported_without_touching_usr(box):
    box.write_policy('permit(principal, action == Box::Action::"shell:exec", resource);\n'
                     'permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write"], '
                     'resource) when { context.input.path like "/tmp/*" };\n')
    box.write_config()
    box.start()
    r = box.bash("cat /tmp/missing; ls /tmp/nothere; touch /tmp/a/b")
    assert r.returncode == 1
    assert r.stderr == ("cat: /tmp/missing: No such file or directory\n"
                        "ls: cannot access '/tmp/nothere': No such file or directory\n"
                        "touch: cannot touch '/tmp/a/b': No such file or directory\n")
    # the three commands, and no refused probe of anything the text never named
    decisions = box.decision_summary()
    assert [d for d in decisions if d[1] == "shell:exec"] == [
        ("permit", "shell:exec", "cat"), ("permit", "shell:exec", "ls"),
        ("permit", "shell:exec", "touch")]
    assert all(res.startswith("/tmp/") for _, action, res in decisions
               if action.startswith("fs:")), decisions
