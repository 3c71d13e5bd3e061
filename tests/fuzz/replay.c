/* replay.c — runs the fuzz target over every file of the corpus (CI):
 *   policy_fuzz_replay DIR...  */
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
  size_t n = 0;
  for (int i = 1; i < argc; i++) {
    GDir *dir = g_dir_open(argv[i], 0, NULL);
    if (!dir) {
      fprintf(stderr, "cannot open corpus %s\n", argv[i]);
      return 1;
    }
    const char *name;
    while ((name = g_dir_read_name(dir))) {
      char *path = g_build_filename(argv[i], name, NULL), *data = NULL;
      gsize len = 0;
      if (g_file_get_contents(path, &data, &len, NULL)) {
        LLVMFuzzerTestOneInput((const uint8_t *)data, len);
        n++;
      }
      g_free(data);
      g_free(path);
    }
    g_dir_close(dir);
  }
  printf("replayed %zu corpus files\n", n);
  return n ? 0 : 1;
}
