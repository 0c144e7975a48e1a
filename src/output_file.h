// Output files appear whole or not at all: they are written under a temporary name beside the
// target (PATH.tmp-PID), then renamed over it. Errors name the file: "PATH: cannot write: why".
#pragma once

#include <sqlite3.h>

#include <string>

namespace tlsql {

// The one check before tlsql writes a file (TempFile, `.output`): the target must not be one of
// this process's inputs, whatever name reaches it (a hard link, a symlink, /proc/self/fd/N: the
// same device and inode). Inputs are the files noted with note_input (every trace, script and
// model file read) and, for each watched connection, its database files and the traces its
// `trace` tables name. Throws std::runtime_error "TARGET: cannot write: it is an input of this
// session (PATH)", and "'': cannot write: an empty file name" for an empty target (`-o ""`).
void refuse_input(const std::string& target, sqlite3* also = nullptr);  // `also`: one more connection
// Notes a file this process reads (its device and inode now).
void note_input(const std::string& path);
void note_input(const std::string& path, unsigned long device, unsigned long inode);
// Connections whose databases (and their traces' files) are inputs while they are open.
void watch_connection(sqlite3* db);
void unwatch_connection(sqlite3* db);

// The temporary file a target is written through. Refuses an empty name and targets that are
// inputs (refuse_input) or not regular files (a device node or FIFO would be replaced, not written). The temporary name
// is the target's with ".tmp-PID" added, shortened to fit the file system's name limit. Removed unless commit() renamed
// it over the target: by the destructor, and by a handler when SIGINT / SIGTERM / SIGHUP / SIGPIPE end the process
// while it exists (handlers installed only where the signal still has its default action).
class TempFile {
 public:
  explicit TempFile(const std::string& target);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return tmp_; }
  // The temporary file, created new (O_CREAT | O_EXCL | O_NOFOLLOW) and open for writing. Writers
  // that can take a descriptor write through it; SQLite and libzip open path() again, which holds
  // the file created here unless someone with write access to the folder replaced it.
  int fd() const { return fd_; }
  void commit();  // throws std::runtime_error "TARGET: cannot write: why" and removes the temp file

 private:
  std::string target_, tmp_;
  int slot_ = -1;
  int fd_ = -1;
  bool committed_ = false;
};

// Writes `bytes` to `path` through a TempFile.
void write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace tlsql
