// Writes b-trees straight into an SQLite database file, bottom-up from rows already in key order,
// as SQLite's own file format describes them (https://www.sqlite.org/fileformat2.html). Saving a
// GB trace through INSERT costs ~2 us a row in the VDBE plus one full table scan per CREATE INDEX;
// packing the pages directly is memory bandwidth.
//
// The protocol: SQLite creates the file with every table and index (the ones written here empty),
// and closes it; a BtreeFile then appends the pages of each b-tree filled here, puts each tree's
// top page at the root page SQLite allocated for it, and sets the header's page count. The file
// must have no auto-vacuum and no reserved bytes per page (SQLite's defaults; checked).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace tlsql {

// One column value as a record stores it (the types the event table holds).
struct RecordValue {
  enum Type : uint8_t { null, integer, text };
  Type type = null;
  uint32_t len = 0;  // text: bytes
  union {
    int64_t i = 0;
    const char* s;
  };
  static RecordValue of_int(int64_t v) {
    RecordValue r;
    r.type = integer;
    r.i = v;
    return r;
  }
  static RecordValue of_text(std::string_view v) {
    RecordValue r;
    r.type = text;
    r.s = v.data();
    r.len = (uint32_t)v.size();
    return r;
  }
};

// SQLite's order of index keys with the BINARY collation: NULL < integers < text (memcmp, then
// length), column by column. Negative, zero or positive.
int compare_records(std::span<const RecordValue> a, std::span<const RecordValue> b);

class BtreeFile {
 public:
  // Opens a database file SQLite has written and closed. Throws std::runtime_error "PATH: why".
  explicit BtreeFile(const std::string& path);
  ~BtreeFile();
  BtreeFile(const BtreeFile&) = delete;
  BtreeFile& operator=(const BtreeFile&) = delete;

  // Flushes the appended pages and writes the header (page count, change counter).
  void finish();

  // A record's serial types, computed once to size it and once more to write it.
  class Record {
   public:
    uint64_t plan(std::span<const RecordValue> values, bool format4);  // returns the size
    void write(uint8_t* out, std::span<const RecordValue> values) const;

   private:
    uint64_t header_ = 0;
    std::vector<std::pair<uint64_t, uint32_t>> types_;  // serial type, body bytes
  };

  // Rows of one table, added in ascending rowid order (checked).
  class Table {
   public:
    Table(BtreeFile& file, uint32_t root);
    void add(int64_t rowid, std::span<const RecordValue> columns);
    void finish();

   private:
    BtreeFile& f_;
    uint32_t root_;
    std::vector<uint8_t> leaf_;
    uint32_t cells_ = 0, content_ = 0;  // cells in leaf_, start of its cell content area
    int64_t last_rowid_ = 0;
    bool any_ = false;
    std::vector<std::pair<uint32_t, int64_t>> leaves_;  // written leaves: page, largest rowid
    Record record_;
    std::vector<uint8_t> bytes_, cell_;
    void new_leaf();
  };

  // Entries of one index (its key columns, then the rowid), added in compare_records order
  // (checked).
  class Index {
   public:
    Index(BtreeFile& file, uint32_t root);
    void add(std::span<const RecordValue> entry);
    void finish();

   private:
    BtreeFile& f_;
    uint32_t root_;
    std::vector<uint8_t> leaf_;
    uint32_t cells_ = 0, content_ = 0;
    std::vector<RecordValue> last_;
    bool any_ = false;
    std::vector<uint32_t> children_;          // written leaves, in order
    std::vector<std::vector<uint8_t>> seps_;  // the cell (without child pointer) between two leaves
    Record record_;
    std::vector<uint8_t> bytes_, cell_;
  };

 private:
  friend class Table;
  friend class Index;
  uint32_t append(const uint8_t* page);
  void write_page(uint32_t pgno, const uint8_t* page);
  void flush();
  void wait_written();  // until the writer holds no run; throws its error
  void write_runs();    // the writer's loop
  // One interior level over children split into `groups` (first, last): per group a page with a
  // cell for each child but the last (its page number `child(i)`, then `tail(i, cell)`) and the
  // last as the right-most pointer. A level of one page is the tree's top: written at `root`, and
  // nothing is returned; else the pages, appended in order.
  std::vector<uint32_t> interior_level(uint8_t type, uint32_t root,
                                       const std::vector<std::pair<size_t, size_t>>& groups,
                                       const std::function<uint32_t(size_t)>& child,
                                       const std::function<void(size_t, std::vector<uint8_t>&)>& tail);
  uint64_t max_index_local() const { return ((uint64_t)page_size_ - 12) * 64 / 255 - 23; }
  // Appends a payload to `cell` (which holds the size and rowid varints): all of it when it fits
  // the page type's local limit, else the local part and the first overflow page's number, the
  // rest going to overflow pages appended now.
  void payload_cell(std::vector<uint8_t>& cell, const std::vector<uint8_t>& payload, bool table_leaf);

  std::string path_;
  int fd_ = -1;
  bool format4_ = true;
  uint32_t page_size_ = 0, pages_ = 0;  // pages_: the file's page count, appended ones included
  uint32_t flushed_ = 0;                // pages on disk or being written; the rest are in buf_
  std::vector<uint8_t> buf_, writing_, header_;
  // writing_ goes to disk at writing_at_ on a thread of the file's own (started by the first
  // flush) while the next pages are encoded. (A thread started for each run cost ~4% of a 200 MB
  // save's wall time at 256 KiB runs.)
  std::thread writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false, stop_ = false;  // busy_: writing_ handed to the writer, not yet written
  off_t writing_at_ = 0;
  std::string error_;  // the writer's, thrown by the next flush or finish
};

}  // namespace tlsql
