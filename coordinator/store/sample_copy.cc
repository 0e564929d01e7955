#include "coordinator/store/sample_copy.h"

#include <libpq-fe.h>
#include <poll.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace perfgate::coordinator::store {
namespace {

// libpqxx 6 hands a transaction's libpq connection to its large-object
// classes only (a protected static of pqxx::largeobject); a binary COPY
// needs libpq's PQputCopyData on that connection.
class TransactionConnection : public pqxx::largeobject {
 public:
  static PGconn* Of(const pqxx::dbtransaction& txn) { return raw_connection(txn); }
};

// Bytes of COPY data handed to libpq at a time.
constexpr size_t kChunk = 1 << 18;

// Binary COPY data being built (PostgreSQL's "binary" format: every
// integer in network byte order, every field its length then its bytes).
class CopyData {
 public:
  void Int16(uint16_t v) { Put(__builtin_bswap16(v)); }
  void Int32(uint32_t v) { Put(__builtin_bswap32(v)); }
  void Int64(uint64_t v) { Put(__builtin_bswap64(v)); }
  void Bytes(const void* p, size_t n) { data_.append(static_cast<const char*>(p), n); }
  std::string& data() { return data_; }

 private:
  static_assert(std::endian::native == std::endian::little, "the byte swaps assume a little-endian host");
  template <class U>
  void Put(U big_endian) {
    data_.append(reinterpret_cast<const char*>(&big_endian), sizeof big_endian);
  }
  std::string data_;
};

// The 16 bytes of a canonical UUID's text.
std::string UuidBytes(const std::string& text) {
  std::string out;
  int high = -1;
  for (const char ch : text) {
    if (ch == '-') continue;
    int nibble = -1;
    if (ch >= '0' && ch <= '9') nibble = ch - '0';
    if (ch >= 'a' && ch <= 'f') nibble = ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') nibble = ch - 'A' + 10;
    if (nibble < 0) throw std::invalid_argument("run id '" + text + "' is not a UUID");
    if (high < 0) {
      high = nibble;
    } else {
      out.push_back(static_cast<char>(high << 4 | nibble));
      high = -1;
    }
  }
  if (out.size() != 16 || high >= 0) throw std::invalid_argument("run id '" + text + "' is not a UUID");
  return out;
}

// The fields every row of one metric shares: the field count, the run, the
// benchmark and the metric, and the length of the index that follows.
std::string RowPrefix(const std::string& uuid, int64_t bench_id, int64_t metric_id) {
  CopyData d;
  d.Int16(6);
  d.Int32(16);
  d.Bytes(uuid.data(), uuid.size());
  d.Int32(8);
  d.Int64(static_cast<uint64_t>(bench_id));
  d.Int32(8);
  d.Int64(static_cast<uint64_t>(metric_id));
  d.Int32(4);
  return std::move(d.data());
}

// Waits until libpq can send more, for a connection in nonblocking mode
// (a blocking one never returns "not now").
void Flush(PGconn* conn) {
  for (;;) {
    const int pending = PQflush(conn);
    if (pending == 0) return;
    if (pending < 0) throw pqxx::broken_connection(PQerrorMessage(conn));
    pollfd p{PQsocket(conn), POLLOUT | POLLIN, 0};
    if (poll(&p, 1, -1) < 0 && errno != EINTR) throw pqxx::broken_connection("poll on the PostgreSQL socket failed");
    if ((p.revents & POLLIN) != 0 && PQconsumeInput(conn) == 0) throw pqxx::broken_connection(PQerrorMessage(conn));
  }
}

void Send(PGconn* conn, const std::string& data) {
  for (;;) {
    const int sent = PQputCopyData(conn, data.data(), static_cast<int>(data.size()));
    if (sent == 1) return;
    if (sent < 0) throw pqxx::broken_connection(PQerrorMessage(conn));
    Flush(conn);
  }
}

// Ends the COPY (abandoned with `error` when not null) and throws what the
// server answered unless it stored the rows.
void Finish(PGconn* conn, const char* error) {
  int ended = 0;
  while ((ended = PQputCopyEnd(conn, error)) == 0) Flush(conn);
  if (ended < 0) throw pqxx::broken_connection(PQerrorMessage(conn));
  Flush(conn);
  std::string message, state;
  while (PGresult* r = PQgetResult(conn)) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK && message.empty()) {
      message = PQresultErrorMessage(r);
      const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      state = s != nullptr ? s : "";
    }
    PQclear(r);
  }
  if (message.empty() || error != nullptr) return;
  if (PQstatus(conn) != CONNECTION_OK) throw pqxx::broken_connection(message);
  if (state.rfind("40", 0) == 0) throw pqxx::transaction_rollback(message);
  throw pqxx::sql_error(message, "COPY samples", state.empty() ? nullptr : state.c_str());
}

// The COPY data of `cases`, handed to `send` in chunks of about kChunk bytes.
template <class F>
void EncodeRows(const std::string& run_id, const std::vector<CaseResult>& cases, const std::vector<CaseIds>& ids,
                const F& send) {
  static constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // and its final NUL
  const std::string uuid = UuidBytes(run_id);
  CopyData d;
  d.data().reserve(kChunk + 256);
  d.Bytes(kSignature, sizeof kSignature);
  d.Int32(0);  // flags: no OIDs
  d.Int32(0);  // no header extension
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& [bench_id, metric_ids] = ids[ci];
    std::vector<std::string> prefixes;
    for (const int64_t metric_id : metric_ids) prefixes.push_back(RowPrefix(uuid, bench_id, metric_id));
    for (const Sample& s : cases[ci].samples) {
      for (size_t mi = 0; mi < prefixes.size(); ++mi) {
        d.Bytes(prefixes[mi].data(), prefixes[mi].size());
        d.Int32(s.index);
        d.Int32(8);
        d.Int64(std::bit_cast<uint64_t>(s.values[mi]));
        d.Int32(1);
        d.data().push_back(s.throttled ? 1 : 0);
      }
      if (d.data().size() >= kChunk) {
        send(d.data());
        d.data().clear();
      }
    }
  }
  d.Int16(0xFFFF);  // the trailer: a field count of -1
  send(d.data());
}

}  // namespace

void CopySamples(pqxx::dbtransaction& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                 const std::vector<CaseIds>& ids) {
  txn.exec(std::string("COPY samples (run_id, benchmark_id, metric_id, idx, value, throttled) FROM STDIN "
                       "(FORMAT binary)"));
  PGconn* conn = TransactionConnection::Of(txn);
  try {
    EncodeRows(run_id, cases, ids, [&](const std::string& chunk) { Send(conn, chunk); });
  } catch (const std::exception& e) {
    // Leaves the connection out of COPY, for the transaction to roll back.
    try {
      Finish(conn, e.what());
    } catch (const std::exception&) {
    }
    throw;
  }
  Finish(conn, nullptr);
}

}  // namespace perfgate::coordinator::store
