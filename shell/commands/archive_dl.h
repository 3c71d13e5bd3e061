/* archive_dl.h — libarchive, resolved at run time (see lazy_dl.h): linked,
 * it would bring libxml2, ICU, libstdc++ and a dozen more libraries into
 * every Shell start for `tar` alone.  Included through archive.h; the
 * macros route the commands' archive_* calls through the table, so their
 * code reads as ordinary libarchive. */
#ifndef BOX_SHELL_COMMANDS_ARCHIVE_DL_H
#define BOX_SHELL_COMMANDS_ARCHIVE_DL_H

#include <archive.h>
#include <archive_entry.h>

#include "shell/commands/lazy_dl.h"

#define BOX_ARCHIVE_FUNCTIONS(X)                                                                   \
  X(archive_entry_copy_stat)                                                                       \
  X(archive_entry_filetype)                                                                        \
  X(archive_entry_free)                                                                            \
  X(archive_entry_gid)                                                                             \
  X(archive_entry_gname)                                                                           \
  X(archive_entry_hardlink)                                                                        \
  X(archive_entry_mode)                                                                            \
  X(archive_entry_mtime)                                                                           \
  X(archive_entry_mtime_is_set)                                                                    \
  X(archive_entry_mtime_nsec)                                                                      \
  X(archive_entry_new)                                                                             \
  X(archive_entry_pathname)                                                                        \
  X(archive_entry_perm)                                                                            \
  X(archive_entry_rdevmajor)                                                                       \
  X(archive_entry_rdevminor)                                                                       \
  X(archive_entry_set_gname)                                                                       \
  X(archive_entry_set_hardlink)                                                                    \
  X(archive_entry_set_pathname)                                                                    \
  X(archive_entry_set_size)                                                                        \
  X(archive_entry_set_symlink)                                                                     \
  X(archive_entry_set_uname)                                                                       \
  X(archive_entry_size)                                                                            \
  X(archive_entry_symlink)                                                                         \
  X(archive_entry_uid)                                                                             \
  X(archive_entry_uname)                                                                           \
  X(archive_error_string)                                                                          \
  X(archive_read_data_block)                                                                       \
  X(archive_read_free)                                                                             \
  X(archive_read_new)                                                                              \
  X(archive_read_next_header)                                                                      \
  X(archive_read_open)                                                                             \
  X(archive_read_support_filter_all)                                                               \
  X(archive_read_support_format_gnutar)                                                            \
  X(archive_read_support_format_tar)                                                               \
  X(archive_set_error)                                                                             \
  X(archive_write_add_filter_bzip2)                                                                \
  X(archive_write_add_filter_gzip)                                                                 \
  X(archive_write_add_filter_xz)                                                                   \
  X(archive_write_close)                                                                           \
  X(archive_write_data)                                                                            \
  X(archive_write_free)                                                                            \
  X(archive_write_header)                                                                          \
  X(archive_write_new)                                                                             \
  X(archive_write_open)                                                                            \
  X(archive_write_set_format_gnutar)

typedef struct {
  BOX_ARCHIVE_FUNCTIONS(BOX_DL_FIELD)
} BoxArchiveApi;

extern const BoxArchiveApi *box_archive; /* set before any call (box_dl_command) */
#ifndef BOX_ARCHIVE_DL_IMPL
#define archive_entry_copy_stat(...) (box_archive->archive_entry_copy_stat(__VA_ARGS__))
#define archive_entry_filetype(...) (box_archive->archive_entry_filetype(__VA_ARGS__))
#define archive_entry_free(...) (box_archive->archive_entry_free(__VA_ARGS__))
#define archive_entry_gid(...) (box_archive->archive_entry_gid(__VA_ARGS__))
#define archive_entry_gname(...) (box_archive->archive_entry_gname(__VA_ARGS__))
#define archive_entry_hardlink(...) (box_archive->archive_entry_hardlink(__VA_ARGS__))
#define archive_entry_mode(...) (box_archive->archive_entry_mode(__VA_ARGS__))
#define archive_entry_mtime(...) (box_archive->archive_entry_mtime(__VA_ARGS__))
#define archive_entry_mtime_is_set(...) (box_archive->archive_entry_mtime_is_set(__VA_ARGS__))
#define archive_entry_mtime_nsec(...) (box_archive->archive_entry_mtime_nsec(__VA_ARGS__))
#define archive_entry_new(...) (box_archive->archive_entry_new(__VA_ARGS__))
#define archive_entry_pathname(...) (box_archive->archive_entry_pathname(__VA_ARGS__))
#define archive_entry_perm(...) (box_archive->archive_entry_perm(__VA_ARGS__))
#define archive_entry_rdevmajor(...) (box_archive->archive_entry_rdevmajor(__VA_ARGS__))
#define archive_entry_rdevminor(...) (box_archive->archive_entry_rdevminor(__VA_ARGS__))
#define archive_entry_set_gname(...) (box_archive->archive_entry_set_gname(__VA_ARGS__))
#define archive_entry_set_hardlink(...) (box_archive->archive_entry_set_hardlink(__VA_ARGS__))
#define archive_entry_set_pathname(...) (box_archive->archive_entry_set_pathname(__VA_ARGS__))
#define archive_entry_set_size(...) (box_archive->archive_entry_set_size(__VA_ARGS__))
#define archive_entry_set_symlink(...) (box_archive->archive_entry_set_symlink(__VA_ARGS__))
#define archive_entry_set_uname(...) (box_archive->archive_entry_set_uname(__VA_ARGS__))
#define archive_entry_size(...) (box_archive->archive_entry_size(__VA_ARGS__))
#define archive_entry_symlink(...) (box_archive->archive_entry_symlink(__VA_ARGS__))
#define archive_entry_uid(...) (box_archive->archive_entry_uid(__VA_ARGS__))
#define archive_entry_uname(...) (box_archive->archive_entry_uname(__VA_ARGS__))
#define archive_error_string(...) (box_archive->archive_error_string(__VA_ARGS__))
#define archive_read_data_block(...) (box_archive->archive_read_data_block(__VA_ARGS__))
#define archive_read_free(...) (box_archive->archive_read_free(__VA_ARGS__))
#define archive_read_new(...) (box_archive->archive_read_new(__VA_ARGS__))
#define archive_read_next_header(...) (box_archive->archive_read_next_header(__VA_ARGS__))
#define archive_read_open(...) (box_archive->archive_read_open(__VA_ARGS__))
#define archive_read_support_filter_all(...)                                                       \
  (box_archive->archive_read_support_filter_all(__VA_ARGS__))
#define archive_read_support_format_gnutar(...)                                                    \
  (box_archive->archive_read_support_format_gnutar(__VA_ARGS__))
#define archive_read_support_format_tar(...)                                                       \
  (box_archive->archive_read_support_format_tar(__VA_ARGS__))
#define archive_set_error(...) (box_archive->archive_set_error(__VA_ARGS__))
#define archive_write_add_filter_bzip2(...)                                                        \
  (box_archive->archive_write_add_filter_bzip2(__VA_ARGS__))
#define archive_write_add_filter_gzip(...) (box_archive->archive_write_add_filter_gzip(__VA_ARGS__))
#define archive_write_add_filter_xz(...) (box_archive->archive_write_add_filter_xz(__VA_ARGS__))
#define archive_write_close(...) (box_archive->archive_write_close(__VA_ARGS__))
#define archive_write_data(...) (box_archive->archive_write_data(__VA_ARGS__))
#define archive_write_free(...) (box_archive->archive_write_free(__VA_ARGS__))
#define archive_write_header(...) (box_archive->archive_write_header(__VA_ARGS__))
#define archive_write_new(...) (box_archive->archive_write_new(__VA_ARGS__))
#define archive_write_open(...) (box_archive->archive_write_open(__VA_ARGS__))
#define archive_write_set_format_gnutar(...)                                                       \
  (box_archive->archive_write_set_format_gnutar(__VA_ARGS__))
#endif

#endif
