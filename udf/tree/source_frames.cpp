#include "udf/tree/source_frames.h"

#include <set>

namespace tlsql {

namespace {

// Python 3.11's sys.stdlib_module_names: the top-level names of the standard library.
constexpr const char* kStdlib =
    "__future__ _abc _aix_support _ast _asyncio _bisect _blake2 _bootsubprocess _bz2 _codecs _codecs_cn "
    "_codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _collections _collections_abc "
    "_compat_pickle _compression _contextvars _crypt _csv _ctypes _curses _curses_panel _datetime _dbm "
    "_decimal _elementtree _frozen_importlib _frozen_importlib_external _functools _gdbm _hashlib _heapq "
    "_imp _io _json _locale _lsprof _lzma _markupbase _md5 _msi _multibytecodec _multiprocessing _opcode "
    "_operator _osx_support _overlapped _pickle _posixshmem _posixsubprocess _py_abc _pydecimal _pyio "
    "_queue _random _scproxy _sha1 _sha256 _sha3 _sha512 _signal _sitebuiltins _socket _sqlite3 _sre "
    "_ssl _stat _statistics _string _strptime _struct _symtable _thread _threading_local _tkinter "
    "_tokenize _tracemalloc _typing _uuid _warnings _weakref _weakrefset _winapi _zoneinfo abc aifc "
    "antigravity argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii bisect "
    "builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys "
    "compileall concurrent configparser contextlib contextvars copy copyreg crypt csv ctypes curses "
    "dataclasses datetime dbm decimal difflib dis distutils doctest email encodings ensurepip enum errno "
    "faulthandler fcntl filecmp fileinput fnmatch fractions ftplib functools gc genericpath getopt "
    "getpass gettext glob graphlib grp gzip hashlib heapq hmac html http idlelib imaplib imghdr imp "
    "importlib inspect io ipaddress itertools json keyword lib2to3 linecache locale logging lzma mailbox "
    "mailcap marshal math mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis nntplib nt "
    "ntpath nturl2path numbers opcode operator optparse os ossaudiodev pathlib pdb pickle pickletools "
    "pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile "
    "pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource rlcompleter runpy "
    "sched secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket "
    "socketserver spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep "
    "struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios "
    "textwrap this threading time timeit tkinter token tokenize tomllib trace traceback tracemalloc tty "
    "turtle turtledemo types typing unicodedata unittest urllib uu uuid venv warnings wave weakref "
    "webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo ";

const std::set<std::string_view>& stdlib() {
  static const std::set<std::string_view> names = [] {
    std::set<std::string_view> s;
    std::string_view all = kStdlib;
    while (!all.empty()) {
      size_t end = all.find(' ');
      if (end) s.insert(all.substr(0, end));
      if (end == std::string_view::npos) break;
      all.remove_prefix(end + 1);
    }
    return s;
  }();
  return names;
}

}  // namespace

bool python_location(std::string_view name) {
  const size_t at = name.find(".py(");
  return at != std::string_view::npos && name.find(')', at) != std::string_view::npos;
}

bool library_frame(std::string_view frame) {
  if (frame.starts_with("<")) return true;  // <frozen importlib._bootstrap>, <built-in method ...>
  std::string_view path = frame.substr(0, frame.find(".py("));
  for (std::string_view packages : {"site-packages/", "dist-packages/"})
    if (size_t at = path.rfind(packages); at != std::string_view::npos) path = path.substr(at + packages.size());
  // An absolute path into an interpreter's own library: /usr/lib/python3.11/threading.py.
  if (path.find("/lib/python3.") != std::string_view::npos) return true;
  const std::string_view top = path.substr(0, path.find('/'));
  return top == "torch" || top == "functorch" || top == "torchgen" || stdlib().count(top) > 0;
}

}  // namespace tlsql
