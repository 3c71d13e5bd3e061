/* fuzz_policy.c — fuzz target for the policy parser and validator: any
 * byte string is loaded with and without an operator home; a policy that
 * loads is then asked a fixed request per action.  Build with
 *   clang -fsanitize=fuzzer,address,undefined (see tests/fuzz/README.md). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const requests[][2] = {
  { "fs:read", "{\"path\":\"~/src/a.txt\",\"operation\":\"read_content\"}" },
  { "fs:write", "{\"path\":\"/tmp/x\",\"operation\":\"write_content\"}" },
  { "net:connect", "{\"host\":\"example.com\",\"ip\":\"1.2.3.4\",\"port\":443}" },
  { "http:request", "{\"host\":\"a\",\"port\":80,\"method\":\"GET\",\"path\":\"/"
                    "\",\"body_bytes\":0,\"intercepted\":false}" },
  { "shell:exec",
    "{\"command\":\"git "
    "status\",\"program\":\"git\",\"arg1\":\"status\",\"arg_count\":1,\"cwd\":\"/w\"}" },
  { "shell:spawn", "{\"command\":\"git\",\"program\":\"git\",\"arg_count\":0,\"cwd\":\"/"
                   "w\",\"program_path\":\"/usr/bin/git\",\"credential_reads\":[\"a\"]}" },
  { "mcp:call", "{\"server\":\"demo\",\"method\":\"tools/call\",\"tool\":\"add\"}" },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 1 << 16) return 0;
  char *text = g_malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  for (int pass = 0; pass < 2; pass++) {
    GError *error = NULL;
    BoxPolicy *p = box_policy_load_string(text, pass ? "/home/op" : NULL, &error);
    if (!p) {
      g_clear_error(&error);
      continue;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(requests); i++) {
      json_object *input = json_tokener_parse(requests[i][1]);
      BoxDecision *d = box_policy_decide(p, requests[i][0], input);
      box_decision_free(d);
      json_object_put(input);
    }
    box_policy_free(p);
  }
  g_free(text);
  return 0;
}
