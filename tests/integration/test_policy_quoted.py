"""The policy language's acceptance: every rule quoted in ../shared/spec/policy.md and
../shared/seeds/ loads, warns or is refused exactly as the spec says, through
`box policy check` on a real file (exit status, stdout and the whole stderr).

Fragments the spec quotes (an idiom, a scope, a field read) are put in the
smallest rule that the spec's sentence is about; each case names where its
text comes from.  Refusals carry the spec's text plus our position suffix.
"""
import json
import subprocess

import pytest

from conftest import BOX

HOME = "/home/op"
EXEC = 'permit(principal, action == Box::Action::"shell:exec", resource)'
SPAWN = 'permit(principal, action == Box::Action::"shell:spawn", resource)'
READ = 'permit(principal, action == Box::Action::"fs:read", resource)'
FEXEC = 'forbid(principal, action == Box::Action::"shell:exec", resource)'
PARSE = "failed to parse policy source: dogwood parse: "
SCHEMA = "policy fails schema validation: "
INERT = "policy compares an inert literal: the permit rule with no @id compares "
UNKNOWN = ("policy references unknown action: for policy `policy_0`, unrecognized action `{}` at line 1, "
           "column 29; for policy `policy_0`, unable to find an applicable action given the policy scope "
           "constraints at line 1, column 19")
CAP = "count_within(1h, Box::Action::\"shell:exec\"::request{}) <= 3"


def ok(where, text, home=HOME):
    return pytest.param(text, home, 0, "", id=where)


def warn(where, text, *warnings, home=HOME):
    return pytest.param(text, home, 0, "".join(f"box: warning: {w}\n" for w in warnings), id=where)


def refused(where, text, error, home=HOME):
    return pytest.param(text, home, 1, error, id=where)


CASES = [
    # ---- §1.1 lexical ---------------------------------------------------------------------
    ok("1.1-escapes", EXEC + ' when { context.input.command == "a\\n\\t\\r\\0\\\\\\"\\\'\\*\\u{1F600}\\u{0}" };'),
    ok("1.1-comments", "// a comment\n" + EXEC + " // trailing\nwhen { true }; // end"),
    refused("1.1-long-out-of-range", EXEC + " when { context.input.arg_count > 9223372036854775808 };",
            PARSE + "integer literal `9223372036854775808` is out of range at line 1, column 99"),
    ok("1.1-i64-min", EXEC + " when { context.input.arg_count > -9223372036854775808 };"),
    # ---- §1.2 file structure and scopes ----------------------------------------------------
    refused("1.2-effect", "allow(principal, action, resource);",
            PARSE + "policy effect must be `permit` or `forbid`, found `allow` at line 1, column 1"),
    ok("1.2-empty-scope", "permit();"),
    ok("1.2-any-order-trailing-comma", 'permit(resource, action == Box::Action::"fs:read", principal,);'),
    refused("1.2-duplicate-scope", "permit(principal, principal, resource);",
            PARSE + "duplicate `principal` in scope at line 1, column 19"),
    refused("1.2-extra-scope", "permit(principal, action, resource, x);",
            PARSE + "this policy has an extra element in the scope: `x` at line 1, column 37"),
    refused("1.2-scope-variable", "permit(principal, action, foo);",
            PARSE + "unexpected scope variable `foo`; expected `principal`, `action`, or `resource` at line 1, "
            "column 27"),
    refused("1.2-scope-operator", 'permit(principal <= Box::Agent::"self", action, resource);',
            PARSE + "scope only allows `==` or `in`, found `<=` at line 1, column 18"),
    refused("1.2-action-is", "permit(principal, action is Box::Action, resource);",
            PARSE + "`action is` is not allowed in the scope at line 1, column 26"),
    ok("1.2-self-and-unused",
       'permit(principal == Box::Agent::"self", action, resource == Box::Resource::"unused");'),
    ok("1.2-scope-forms", 'permit(principal is Box::Agent in Box::Agent::"self", action in Box::Action::"fs:read", '
                          'resource is Box::Resource);'),
    refused("1.2-resource-codex", 'permit(principal, action, resource == Box::"codex");',
            SCHEMA + "for policy `policy_0`, unrecognized entity type `Box` at line 1, column 39"),
    refused("1.2-guardrails", "permit(principal, action, resource) when guardrails { true };",
            PARSE + "a `guardrails` clause is not accepted; write `when { ... }` at line 1, column 42"),
    # ---- §1.3 expressions: rejected Cedar forms ---------------------------------------------
    refused("1.3-legacy-colon", "permit(principal : Box::Agent, action, resource);",
            PARSE + "the legacy form `principal : Type` is not supported; write `principal is Type` at line 1, "
            "column 18"),
    refused("1.3-single-equals", "permit(principal, action, resource) when { 1 = 1 };",
            PARSE + "unexpected `=`; did you mean `==`? at line 1, column 46"),
    refused("1.3-slash", EXEC + " when { context.input.arg_count / 2 == 1 };",
            PARSE + "`/` is not a supported operator at line 1, column 97"),
    refused("1.3-percent", EXEC + " when { context.input.arg_count % 2 == 1 };",
            PARSE + "`%` is not a supported operator at line 1, column 97"),
    refused("1.3-entity-initializer", "permit(principal, action, resource) when { Box::Agent::{} == principal };",
            PARSE + "entity initializers `Type::{...}` are not supported at line 1, column 56"),
    refused("1.3-template-slot", "permit(?principal, action, resource);",
            PARSE + "policy is not static: template slots are not supported at line 1, column 8"),
    refused("1.3-template-slot-resource", "permit(principal, action, ?resource);",
            PARSE + "policy is not static: template slots are not supported at line 1, column 27"),
    refused("1.3-mixed-unary", EXEC + " when { !-context.input.arg_count };",
            PARSE + "unary operators `!` and `-` cannot be mixed at line 1, column 74"),
    refused("1.3-bare-name", "permit(principal, action, resource) when { x };",
            PARSE + "`x` is not a valid variable at line 1, column 44"),
    # ---- §1.3 Box idioms ------------------------------------------------------------------
    ok("1.3-idiom-path", READ + ' when { context.input.path == "~/p" || context.input.path like "~/p/*" };'),
    ok("1.3-idiom-arg1", EXEC + ' when { context.input has arg1 && context.input.arg1 == "-rf" };'),
    ok("1.3-idiom-contains", EXEC + ' when { context.input has arg1 && ["status","diff"].contains(context.input.arg1) };'),
    refused("1.3-idiom-contains-unguarded", EXEC + ' when { ["status","diff"].contains(context.input.arg1) };',
            SCHEMA + "for policy `policy_0`, unable to guarantee safety of access to optional attribute "
            "`input.arg1` in context for Box::Action::\"shell:exec\" at line 1, column 114"),
    ok("1.3-idiom-enum", READ + ' when { context.input.operation == Box::FsReadOperation::"enumerate" };'),
    ok("1.3-operators", EXEC + ' when { if context.input has arg1 then context.input.arg1 like "-*\\*" else '
                               '(context.input.arg_count + 1) * 2 - 3 >= 0 && !(context.input.program != "x") || '
                               '[1, 2,].containsAny([2]) && {a: 1, "b c": [true]}["b c"].contains(true) && '
                               'principal is Box::Agent && [1].isEmpty() == false };'),
    # ---- §1.4 annotations -------------------------------------------------------------------
    ok("1.4-blank-ids-not-duplicates", '@id("  ") ' + EXEC + ';\n@id("  ") ' + EXEC + ";"),
    ok("1.4-other-annotations", '@foo("x") @bar ' + EXEC + ";"),
    # ---- §1.5 macros: `def` refused with a parse error (the spec's option), the defaults expand
    refused("1.5-def", 'def cedar is_git(?p) { ?p == "git" };\n' + EXEC + " when { is_git(context.input.program) };",
            PARSE + "macro definitions (`def`) are not supported at line 1, column 1"),
    ok("1.5-count_within", FEXEC + ' when temporal { count_within(1h, Box::Action::"shell:exec"::request{}) > 3 };'),
    ok("1.5-count_within-parenthesized",
       FEXEC + ' when temporal { (count_within(1h, Box::Action::"shell:exec"::request{})) > 3 };'),
    ok("1.5-sum_within", FEXEC + ' when temporal { sum_within(b, 1h, Box::Action::"http:request"::response{ '
                                 'input.body_bytes: b }) > 3 };'),
    ok("1.5-count_distinct_within", FEXEC + ' when temporal { count_distinct_within(p, 1h, '
                                            'Box::Action::"fs:read"::request{ input.path: p }) > 3 };'),
    ok("1.5-bind", FEXEC + ' when temporal { bind(n, 3, formerly within 1h Box::Action::"shell:exec"::response{ '
                           'output.status: n }) };'),
    # ---- §2.1 where temporal clauses go ---------------------------------------------------------
    ok("2.1-inline", FEXEC + ' when { context.input.arg_count > 5 && temporal { formerly within 1h '
                             'Box::Action::"shell:exec"::request{} } };'),
    ok("2.1-mixed-clauses", FEXEC + ' when { context.input.arg_count > 5 } unless temporal { formerly within 1h '
                                    'Box::Action::"shell:exec"::response{ output.status: 0 } } when { true };'),
    # ---- §2.2/§2.4/§2.5 grammar -------------------------------------------------------------
    ok("2.5-since-idiom", FEXEC + ' when temporal { !Box::Action::"shell:exec"::request{ input.program: "make" } '
                                  'since within 10m Box::Action::"shell:exec"::response{ input.program: "make", '
                                  'output.status: 0 } };'),
    ok("2.4-correlation", FEXEC + ' when temporal { previous within 10s Box::Action::"shell:exec"::request{ '
                                  'input.program: context.input.program } };'),
    ok("2.3-caller-and-requestId", FEXEC + ' when temporal { formerly within 1h Box::Action::"shell:exec"::request{ '
                                           'callerPrincipal: principal, callerResource: resource, requestId: _ } };'),
    ok("3.5-1m-and-60s", "\n".join(FEXEC + f' when temporal {{ formerly within {w} '
                                           'Box::Action::"shell:exec"::request{} };'
                                           for w in ("1m", "60s", "24h", "1d"))),
    # ---- §2.6 acceptance rules --------------------------------------------------------------
    refused("2.6-window", FEXEC + ' when temporal { formerly within 48h Box::Action::"shell:exec"::request{} };',
            SCHEMA + "temporal window `48h` exceeds the maximum allowed window `24h` set by the event schema's "
            "`max_window`; shorten this window to at most `24h`, or raise `max_window` in the event schema at "
            "line 1, column 82"),
    refused("2.6-or", FEXEC + ' when temporal { formerly within 1h (Box::Action::"shell:exec"::request{} || '
                              'Box::Action::"shell:spawn"::request{}) };',
            PARSE + "`||` is not allowed in a temporal body; write one rule per alternative at line 1, column 139"),
    refused("2.6-undeclared-event", FEXEC + ' when temporal { formerly within 1h Box::Action::"fs"::request{} };',
            SCHEMA + 'predicate `Box::Action::"fs"::request` does not name a declared event (no event kind '
            '`request` derived for action `fs`) at line 1, column 101'),
    refused("2.6-callerResorce", FEXEC + ' when temporal { formerly within 1h Box::Action::"shell:exec"::request{ '
                                         'callerResorce: _ } };',
            SCHEMA + 'for policy `policy_0`, `callerResorce` is not a field of the event '
            '`Box::Action::"shell:exec"::request` at line 1, column 152'),
    refused("2.6-output-on-request", FEXEC + ' when temporal { formerly within 1h Box::Action::"shell:exec"::request{ '
                                             'output.status: 0 } };',
            SCHEMA + 'for policy `policy_0`, `output.status` is not a field of the event '
            '`Box::Action::"shell:exec"::request` (only a ::response carries output) at line 1, column 152'),
    refused("2.6-output-on-error", FEXEC + ' when temporal { formerly within 1h Box::Action::"shell:exec"::error{ '
                                           'output.status: 0 } };',
            SCHEMA + 'for policy `policy_0`, `output.status` is not a field of the event '
            '`Box::Action::"shell:exec"::error` (only a ::response carries output) at line 1, column 150'),
    refused("2.6-filter-first", FEXEC + ' when temporal { exists (a: Long). (a > 100 && formerly within 1h '
                                        'Box::Action::"shell:exec"::response{ output.status: a }) };',
            SCHEMA + "for policy `policy_0`, variable `a` is compared before anything restricts it; put the event "
            "predicate, `tp` or binding equality that binds it first at line 1, column 101"),
    ok("2.6-filter-after", FEXEC + ' when temporal { exists (a: Long). (formerly within 1h '
                                   'Box::Action::"shell:exec"::response{ output.status: a } && a > 100) };'),
    refused("2.6-free-variable", FEXEC + ' when temporal { formerly within 1h Box::Action::"shell:exec"::response{ '
                                         'output.status: a } };',
            PARSE + "variable `a` is not bound; bind it with `exists (a: T).` or an aggregate's `for`, or write `_` "
            "for any value at line 1, column 153"),
    # ---- §2.7 worked examples -------------------------------------------------------------
    ok("2.7-write-budget", """\
// write budget: refuse the 21st content write completed in one hour
forbid (principal, action == Box::Action::"fs:write", resource)
when { context.input.operation == Box::FsWriteOperation::"write_content" }
when temporal { exists (total: Long). ((count for (t: Timepoint). where (formerly within 1h (
  Box::Action::"fs:write"::response{ input.path: _, input.operation: Box::FsWriteOperation::"write_content",
  output.result: Box::FsResponseResult::"completed" } && tp(t)))) == total && total >= 20) };"""),
    ok("2.7-commit-after-test", """\
// commit only after a passing test in the last hour
forbid (principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "git" && context.input has arg1 && context.input.arg1 == "commit" }
unless temporal { formerly within 1h (Box::Action::"shell:spawn"::response{
  input.program: "cargo", input.arg1: "test", output.status: 0 }) };"""),
    ok("2.7-byte-budget", """\
// outbound byte budget (permit form, sole permit for the action)
permit (principal, action == Box::Action::"http:request", resource)
when temporal { exists (total: Long). ((sum b for (b: Long), (t: Timepoint). where (
  formerly within 60s (Box::Action::"http:request"::response{ input.host: _, input.body_bytes: b }
  && tp(t)))) == total && total < 100) };"""),
    # ---- §3.1 -------------------------------------------------------------------------------
    ok("3.1-overflow-loads", "permit(principal,action,resource); forbid(principal,action,resource) when { "
                             "9223372036854775807 + 1 > 0 };"),
    ok("3.1-catch-all", "permit(principal, action, resource);"),
    ok("3.1-comments-only", "// nothing here\n"),
    # ---- §3.4 classes and examples ----------------------------------------------------------
    refused("3.4-parse-eof", "permit(principal, action, resource)",
            PARSE + "unexpected end of input; expected `;` to end the policy, or `when`/`unless` to add a condition "
            "at line 2, column 1"),
    refused("3.4-provider", "permit(principal, action, resource) when { Acme::spent_today() > 3 };",
            "failed to parse policy source: dogwood: information providers are not enabled in this build at line 1, "
            "column 44"),
    refused("3.4-unknown-function", "permit(principal, action, resource) when { spent_today() > 3 };",
            PARSE + "unknown function `spent_today` at line 1, column 44"),
    refused("3.4-paht", READ + ' when { context.input.paht == "x" };',
            SCHEMA + 'for policy `policy_0`, attribute `input.paht` in context for Box::Action::"fs:read" not found '
            "at line 1, column 84"),
    refused("3.4-enum-list", READ + ' when { context.input.operation == Box::FsReadOperation::"list" };',
            SCHEMA + 'for policy `policy_0`: entity `Box::FsReadOperation::"list"` is of an enumerated entity type, '
            'but `"list"` is not declared as a valid eid at line 1, column 97'),
    refused("3.4-optional-arg1", EXEC + ' when { context.input.arg1 == "x" };',
            SCHEMA + "for policy `policy_0`, unable to guarantee safety of access to optional attribute `input.arg1` "
            'in context for Box::Action::"shell:exec" at line 1, column 87'),
    refused("3.4-ip-compare", 'permit(principal, action == Box::Action::"net:connect", resource) when { '
                              'context.input has ip && context.input.ip == ip("10.0.0.1") };',
            SCHEMA + "the types String and ipaddr are not compatible at line 1, column 115"),
    refused("3.4-fs-raed", 'permit(principal, action == Box::Action::"fs:raed", resource);',
            UNKNOWN.format('Box::Action::"fs:raed"')),
    refused("3.4-shared-id", "\n".join(f'@id("{i}") ' + EXEC + ";" for i in "ababa"),
            'policy gives one @id to more than one rule: @id("a") is on rules 1, 3, 5; @id("b") is on rules 2, 4; '
            "a denial and a telemetry record name a rule by its @id, so give each rule its own @id at line 3, "
            "column 1"),
    refused("3.4-reserved", '@id("other_only") permit(principal, action == Box::Action::"fs:other", resource);',
            'policy names only a reserved action: rule @id("other_only") (rule 1) names only the reserved action '
            '"fs:other"; no operation raises it, so the rule cannot match; name fs:read, fs:write, fs:delete, or '
            "fs:move, alone or beside fs:other at line 1, column 37"),
    refused("3.4-reserved-several", '@id("other_only") permit(principal, action == Box::Action::"fs:other", '
                                    'resource);\nforbid(principal, action in [Box::Action::"fs:other"], resource);',
            'policy names only a reserved action: rule @id("other_only") (rule 1) names only the reserved action '
            '"fs:other"; the forbid rule with no @id (rule 2) names only the reserved action "fs:other"; no '
            "operation raises it, so the rule cannot match; name fs:read, fs:write, fs:delete, or fs:move, alone "
            "or beside fs:other at line 1, column 37"),
    ok("3.4-beside-fs-other",
       'permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:other"], resource);'),
    # strict validation: removed names (also §4)
    *[refused(f"3.4-removed-{n}", f'permit(principal, action == Box::Action::"{n}", resource);',
              UNKNOWN.format(f'Box::Action::"{n}"'))
      for n in ("fs:read_content", "fs:exec", "net", "shell", "tool:invoke", "model:invoke", "agent:invoke",
                "cred:inject", "net:response")],
    refused("3.4-unnamespaced", 'permit(principal, action == Action::"shell", resource);',
            UNKNOWN.format('Action::"shell"')),
    refused("3.4-enum-of-other-action", READ + ' when { context.input.operation == '
                                               'Box::FsReadOperation::"write_content" };',
            SCHEMA + 'for policy `policy_0`: entity `Box::FsReadOperation::"write_content"` is of an enumerated '
            'entity type, but `"write_content"` is not declared as a valid eid at line 1, column 97'),
    refused("3.4-multi-action-unguarded", 'permit(principal, action, resource) when { context.input.path like '
                                          '"~/x/*" };',
            SCHEMA + 'for policy `policy_0`, attribute `input.path` in context for Box::Action::"net:connect" not '
            "found at line 1, column 58"),
    ok("3.4-multi-action-guarded", 'permit(principal, action, resource) when { context.input has path && '
                                   'context.input.path like "~/x/*" };'),
    refused("3.4-type-mismatch-eq", READ + " when { context.input.path == 3 };",
            SCHEMA + "the types Long and String are not compatible at line 1, column 89"),
    refused("3.4-type-mismatch-like", EXEC + ' when { context.input.arg_count like "3" };',
            SCHEMA + "for policy `policy_0`, unexpected type: expected String but saw Long at line 1, column 87"),
    ok("3.4-has-absent-is-false", READ + " when { context.input has nope && context.input.nope == 1 };"),
    ok("3.4-different-entity-types", READ + ' when { principal == Box::Resource::"unused" };'),
    # loads but never matches (no finding)
    ok("3.4-never-other-enum", READ + ' when { context.input.operation == Box::FsWriteOperation::"write_content" };'),
    ok("3.4-never-multi-word", EXEC + ' when { context.input.program == "git status" };'),
    ok("3.4-never-output", EXEC + " when { context has output && context.output.status == 0 };"),
    # inert literals
    warn("3.4-program-slash", EXEC + ' when { context.input.program == "/bin/ls" };',
         'the permit rule with no @id compares context.input.program with "/bin/ls", which matches only a first '
         "word spelled that way; compare context.input.program_path to match the resolved binary"),
    warn("3.4-program-like-slash", EXEC + ' when { context.input.program like "*/ls" };',
         'the permit rule with no @id compares context.input.program with "*/ls", which matches only a first word '
         "spelled that way; compare context.input.program_path to match the resolved binary"),
    refused("3.4-path-under-home", READ + ' when { context.input.path == "/home/op/notes/" };',
            INERT + 'context.input.path with "/home/op/notes/", and a path under the operator home is spelled ~/…; '
            'write "~/notes" at line 1, column 92'),
    refused("3.4-path-home-itself", READ + ' when { "/home/op/" == context.input.path };',
            INERT + 'context.input.path with "/home/op/", and a path under the operator home is spelled ~/…; '
            'write "~" at line 1, column 70'),
    refused("3.4-trailing-slash", READ + ' when { context.input.path == "/etc/" };',
            INERT + 'context.input.path with "/etc/", and a directory is spelled without a trailing slash; write '
            '"/etc" at line 1, column 92'),
    ok("3.4-root-slash", READ + ' when { context.input.path == "/" || context.input.path like "/" };'),
    refused("3.4-like-under-home", READ + ' when { context.input.path like "/home/op/x/*" };',
            INERT + 'context.input.path with the pattern "/home/op/x/*", and a path under the operator home is '
            'spelled ~/…; write "~/x/*" at line 1, column 89'),
    refused("3.4-like-escaped-star", READ + ' when { context.input.path like "/home/op/a\\*b*" };',
            INERT + 'context.input.path with the pattern "/home/op/a\\*b*", and a path under the operator home is '
            'spelled ~/…; write "~/a\\*b*" at line 1, column 89'),
    refused("3.4-like-trailing-slash", READ + ' when { context.input.path like "/etc/*/" };',
            INERT + 'context.input.path with the pattern "/etc/*/", and a directory is spelled without a trailing '
            'slash; write "/etc/*" at line 1, column 89'),
    warn("3.4-like-home-after-wildcard", READ + ' when { context.input.path like "*/home/op/x" };',
         'the permit rule with no @id compares context.input.path with the pattern "*/home/op/x", which names the '
         "operator home after a wildcard; a path under the operator home is spelled ~/…, so the pattern may match "
         "nothing"),
    refused("3.4-contains", READ + ' when { ["/home/op/a", "~/b"].contains(context.input.path) };',
            INERT + 'context.input.path with "/home/op/a", and a path under the operator home is spelled ~/…; '
            'write "~/a" at line 1, column 71'),
    ok("3.4-component-bounded", READ + ' when { context.input.path like "/home/meow/*" };', home="/home/me"),
    refused("3.4-home-root", READ + ' when { context.input.path == "/etc/passwd" };',
            INERT + 'context.input.path with "/etc/passwd", and a path under the operator home is spelled ~/…; '
            'write "~/etc/passwd" at line 1, column 92', home="/"),
    refused("3.4-program-path", SPAWN + ' when { context.input.program_path == "/home/op/bin/x" };',
            INERT + 'context.input.program_path with "/home/op/bin/x", and a path under the operator home is '
            'spelled ~/…; write "~/bin/x" at line 1, column 104'),
    refused("3.4-program-path-slash", SPAWN + ' when { context.input.program_path == "/usr/bin/" };',
            INERT + 'context.input.program_path with "/usr/bin/", and a directory is spelled without a trailing '
            'slash; write "/usr/bin" at line 1, column 104'),
    ok("3.4-unconstrained-no-trailing-check", 'permit(principal, action, resource) when { context.input has path && '
                                              'context.input.path == "/etc/" };'),
    refused("3.4-unconstrained-checks-path", 'permit(principal, action, resource) when { context.input has path && '
                                             'context.input.path == "/home/op/x" };',
            INERT + 'context.input.path with "/home/op/x", and a path under the operator home is spelled ~/…; '
            'write "~/x" at line 1, column 92'),
    ok("3.4-first-action-other-family", 'permit(principal, action in [Box::Action::"net:connect", '
                                        'Box::Action::"fs:read"], resource) when { context.input has path && '
                                        'context.input.path == "/home/op/x" };'),
    ok("3.4-no-home-no-check", READ + ' when { context.input.path == "/home/op/notes" };', home=None),
    # cap-as-permit
    refused("3.4-cap-beside-unconditioned", EXEC + ";\n" + EXEC + " when temporal { " + CAP + " };",
            "policy writes a cap as a permit: the permit rule with no @id (rule 2) carries a temporal clause beside "
            "the permit rule with no @id (rule 1), which permits the same action with no condition; a permit cannot "
            "narrow another permit, so write the cap as a forbid at line 2, column 1"),
    refused("3.4-cap-beside-bare-literal-clauses",
            "permit(principal, action, resource) when { true } unless { false };\n" + EXEC + " when temporal { "
            + CAP + " };",
            "policy writes a cap as a permit: the permit rule with no @id (rule 2) carries a temporal clause beside "
            "the permit rule with no @id (rule 1), which permits the same action with no condition; a permit cannot "
            "narrow another permit, so write the cap as a forbid at line 2, column 1"),
    warn("3.4-cap-beside-conditioned",
         '@id("all") ' + EXEC + ' when { context.input.program == "git" };\n@id("cap") ' + EXEC +
         " when temporal { " + CAP + " };",
         'rule @id("cap") (rule 2) carries a temporal clause beside rule @id("all") (rule 1), which also permits '
         "that action; the budget is inert for every request the other rule admits, so write a cap as a forbid"),
    warn("3.4-cap-undecided-resource",
         'permit(principal, action, resource == Box::Resource::"unused");\n' + EXEC + " when temporal { " + CAP
         + " };",
         "the permit rule with no @id (rule 2) carries a temporal clause beside the permit rule with no @id (rule 1), "
         "which also permits that action; the budget is inert for every request the other rule admits, so write a "
         "cap as a forbid"),
    ok("3.4-cap-both-temporal", EXEC + " when temporal { " + CAP + " };\n" + EXEC +
       ' when temporal { formerly within 1h Box::Action::"shell:exec"::request{} };'),
    ok("3.4-cap-lone", EXEC + " when temporal { " + CAP + " };"),
    ok("3.4-cap-other-action", READ + ";\n" + EXEC + " when temporal { " + CAP + " };"),
    refused("3.4-cap-inline", EXEC + ";\n" + EXEC + " when { temporal { " + CAP + " } };",
            "policy writes a cap as a permit: the permit rule with no @id (rule 2) carries a temporal clause beside "
            "the permit rule with no @id (rule 1), which permits the same action with no condition; a permit cannot "
            "narrow another permit, so write the cap as a forbid at line 2, column 1"),
    # ---- README.md and seeds/ -------------------------------------------------------------
    ok("readme-policy", """\
permit(principal, action == Box::Action::"shell:exec", resource);
permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write"], resource)
when { context.input.path like "~/src/project/*" };
permit(principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "git" };"""),
    ok("seed-000-curl", 'forbid (principal, action == Box::Action::"shell:exec", resource)\n'
                        'when { context.input.program == "curl" };'),
    ok("seed-000-read-project", 'permit (principal, action == Box::Action::"fs:read", resource)\n'
                                'when { context.input.path like "~/src/project/*" };'),
    ok("seed-000-chmod", 'forbid (principal, action == Box::Action::"fs:write", resource)\n'
                         'when { context.input.operation == Box::FsWriteOperation::"set_permissions" };'),
    ok("seed-000-target-debug", 'permit (principal, action == Box::Action::"shell:spawn", resource)\n'
                                'when { context.input.program_path like "~/src/project/target/debug/*" };'),
    ok("seed-000-push", 'forbid (principal, action == Box::Action::"shell:spawn", resource)\nwhen {\n'
                        'context.input.program == "git" &&\ncontext.input has arg1 &&\ncontext.input.arg1 == "push"\n};'),
    # the seed elides the history clause (`unless temporal { … };`): the `…` itself is no policy text
    refused("seed-000-commit-elided", 'forbid (principal, action == Box::Action::"shell:spawn", resource)\nwhen {\n'
                                      'context.input.program == "git" &&\ncontext.input has arg1 &&\n'
                                      'context.input.arg1 == "commit"\n}\nunless temporal { … };',
            PARSE + "unexpected character `…` at line 7, column 19"),
    ok("seed-000-commit-filled", 'forbid (principal, action == Box::Action::"shell:spawn", resource)\nwhen {\n'
                                 'context.input.program == "git" &&\ncontext.input has arg1 &&\n'
                                 'context.input.arg1 == "commit"\n}\nunless temporal { formerly within 10m '
                                 'Box::Action::"shell:spawn"::response{ input.program: "make", input.arg1: "test", '
                                 'output.status: 0 } };'),
]


@pytest.mark.parametrize("text, home, status, stderr", CASES)
def test_quoted_rule(tmp_path, text, home, status, stderr):
    p = tmp_path / "policy.dw"
    p.write_text(text + "\n")
    args = [str(BOX), "policy", "check", str(p)]
    env = None
    if home is not None:
        args += ["--home", home]
    else:
        env = {"PATH": "/usr/bin:/bin"}  # no $HOME and no --home: no operator home, no inert-literal check
    r = subprocess.run(args, capture_output=True, text=True, timeout=30, env=env)
    if status == 0:
        assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", stderr)
    else:
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr == f"box: error: policy file {p} will not load: {stderr}\n"


def decide(tmp_path, text, action, inp):
    p = tmp_path / "policy.dw"
    p.write_text(text + "\n")
    r = subprocess.run([str(BOX), "policy", "decide", str(p), "--home", HOME, action, json.dumps(inp)],
                       capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout.rstrip("\n")


EXEC_IN = {"command": "echo", "program": "echo", "arg_count": 0, "cwd": "/w"}


def test_quoted_decisions(tmp_path):
    """The decisions §3.1 and §3.4 attach to quoted rules."""
    # §3.1: an evaluation error anywhere denies the whole request
    assert decide(tmp_path, "permit(principal,action,resource); forbid(principal,action,resource) when { "
                            "9223372036854775807 + 1 > 0 };", "shell:exec", EXEC_IN) == (
        1, "policy denied this operation on 'echo' because the request could not be evaluated.")
    # §3.1: the catch-all permits everything, fs:other included; `permit();` likewise
    for text in ("permit(principal, action, resource);", "permit();"):
        assert decide(tmp_path, text, "fs:other", {"path": "/x", "operation": "other"}) == (
            0, "policy permitted this operation on '/x'.")
    # §3.1: comments only ⇒ default deny
    assert decide(tmp_path, "// nothing", "shell:exec", EXEC_IN) == (
        1, "policy denied this operation on 'echo' [default-deny]: No permit policy matched this request.")
    # §3.4: loads but never matches
    never = {
        READ + ' when { context.input.operation == Box::FsWriteOperation::"write_content" };':
            ("fs:read", {"path": "/x", "operation": "read_content"}),
        EXEC + ' when { context.input.program == "git status" };':
            ("shell:exec", {"command": "git status", "program": "git", "arg1": "status", "arg_count": 1,
                            "cwd": "/w"}),
        EXEC + " when { context has output && context.output.status == 0 };": ("shell:exec", EXEC_IN),
    }
    for text, (action, inp) in never.items():
        assert decide(tmp_path, text, action, inp)[0] == 1, text
    # §1.2: the scope spelled out matches like the bare one
    assert decide(tmp_path, 'permit(principal == Box::Agent::"self", action, resource == Box::Resource::"unused");',
                  "shell:exec", EXEC_IN)[0] == 0
    # §1.4: an @id literally "default-deny" on a forbid
    assert decide(tmp_path, 'permit(principal, action, resource);\n@id("default-deny") forbid(principal, action, '
                            'resource);', "shell:exec", EXEC_IN) == (
        1, "policy denied this operation on 'echo' [policy: default-deny].")
