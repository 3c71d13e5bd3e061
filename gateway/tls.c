/* gateway/tls.c — TLS interception: a CA made for this run (its
 * certificate is <box_dir>/trust/cert.pem, its key never leaves memory),
 * leaf certificates minted from it per host, and the upstream side that
 * verifies servers against the system's trust store plus configured CAs. */
#include "gateway/gateway-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* Buffers under a TLS connection, OpenSSL's (attach_socket) or, once a
 * TLS 1.3 connection is taken over, record.c's: 32 full records and their
 * framing (a relay write of 512 KiB, the relay's IO_CHUNK, fits) the way
 * responses go, one record the way requests go, which are small or read
 * whole before they are sent. */
#define GW_TLS_BULK_BUFFER (32 * (16384 + 256))
#define GW_TLS_SMALL_BUFFER (16384 + 256)
#define GW_TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
/* What a first client hello upstream offers for TLS 1.3: the suite every
 * TLS 1.3 server must implement (RFC 8446 §9.1), alone, because servers
 * that pick by their own order (Python's ssl module, for one) would
 * otherwise take AES-256. */
#define GW_TLS13_FIRST "TLS_AES_128_GCM_SHA256"

struct GwTls {
  EVP_PKEY *ca_key;
  X509 *ca;
  char *ca_pem;
  EVP_PKEY *leaf_key; /* one key for every leaf of this run */
  SSL_CTX *server;    /* facing clients */
  SSL_CTX *client;    /* facing servers */
  GMutex lock;
  GHashTable *leaves; /* host -> X509* */
};

static bool inet_pton_any(const char *host, unsigned char out[16])
{
  return inet_pton(AF_INET, host, out) == 1 || inet_pton(AF_INET6, host, out) == 1;
}

static char *ssl_error_text(void)
{
  unsigned long e = ERR_get_error();
  char buf[256];
  if (!e) return g_strdup("unknown TLS error");
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return g_strdup(buf);
}

static bool random_serial(X509 *x)
{
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof raw) != 1) return false;
  raw[0] &= 0x7f;
  BIGNUM *bn = BN_bin2bn(raw, sizeof raw, NULL);
  bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
  BN_free(bn);
  return ok;
}

static bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
  X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

/* A v3 certificate for key, valid from an hour ago for days days, with a
 * random serial: its names and extensions are the caller's. */
static X509 *new_cert(EVP_PKEY *key, long days)
{
  X509 *x = X509_new();
  if (!x) return NULL;
  X509_set_version(x, 2);
  random_serial(x);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 60L * 60 * 24 * days);
  X509_set_pubkey(x, key);
  return x;
}

static X509 *make_ca(EVP_PKEY *key)
{
  X509 *x = new_cert(key, 30);
  if (!x) return NULL;
  X509_NAME *name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"boxfs", -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             (const unsigned char *)"boxfs egress gateway (this run)", -1, -1, 0);
  X509_set_issuer_name(x, name);
  if (!add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_ext(x, x, NID_subject_key_identifier, "hash") || !X509_sign(x, key, EVP_sha256())) {
    X509_free(x);
    return NULL;
  }
  return x;
}

static X509 *make_leaf(GwTls *t, const char *host)
{
  X509 *x = new_cert(t->leaf_key, 7);
  if (!x) return NULL;
  g_autofree char *cn = g_strndup(host, 64);
  X509_NAME *name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
  X509_set_issuer_name(x, X509_get_subject_name(t->ca));
  unsigned char bin[16];
  bool is_ip = inet_pton_any(host, bin);
  g_autofree char *san = g_strdup_printf("%s:%s", is_ip ? "IP" : "DNS", host);
  if (!add_ext(x, t->ca, NID_subject_alt_name, san) ||
      !add_ext(x, t->ca, NID_basic_constraints, "critical,CA:FALSE") ||
      !add_ext(x, t->ca, NID_key_usage, "critical,digitalSignature") ||
      !add_ext(x, t->ca, NID_ext_key_usage, "serverAuth") ||
      !add_ext(x, t->ca, NID_subject_key_identifier, "hash") ||
      !add_ext(x, t->ca, NID_authority_key_identifier, "keyid:always") ||
      !X509_sign(x, t->ca_key, EVP_sha256())) {
    X509_free(x);
    return NULL;
  }
  return x;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
  (void)ssl, (void)arg;
  static const unsigned char h11[] = "\x08http/1.1";
  unsigned char *sel = NULL;
  if (SSL_select_next_proto(&sel, outlen, h11, sizeof h11 - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_NOACK;
  *out = sel;
  return SSL_TLSEXT_ERR_OK;
}

static bool write_cert(const char *path, const char *pem, GError **error)
{
  g_autofree char *tmp = g_strconcat(path, ".new", NULL);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot write %s: %s", tmp, g_strerror(errno));
    return false;
  }
  size_t len = strlen(pem);
  bool ok = write(fd, pem, len) == (ssize_t)len;
  ok = fchmod(fd, 0644) == 0 && ok;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot write %s: %s", path, g_strerror(errno));
    unlink(tmp);
    return false;
  }
  return true;
}

GwTls *gw_tls_new(const char *ca_cert_path, const char *const *extra_ca_files, GError **error)
{
  GwTls *t = g_new0(GwTls, 1);
  g_mutex_init(&t->lock);
  t->leaves = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)X509_free);
  t->ca_key = EVP_EC_gen("P-256");
  t->leaf_key = EVP_EC_gen("P-256");
  t->ca = t->ca_key ? make_ca(t->ca_key) : NULL;
  if (!t->ca || !t->leaf_key) {
    g_autofree char *why = ssl_error_text();
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot make the per-run CA: %s", why);
    gw_tls_free(t);
    return NULL;
  }
  BIO *mem = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(mem, t->ca);
  char *data = NULL;
  long n = BIO_get_mem_data(mem, &data);
  t->ca_pem = g_strndup(data, (gsize)n);
  BIO_free(mem);
  if (ca_cert_path && !write_cert(ca_cert_path, t->ca_pem, error)) {
    gw_tls_free(t);
    return NULL;
  }

  t->server = SSL_CTX_new(TLS_server_method());
  t->client = SSL_CTX_new(TLS_client_method());
  if (!t->server || !t->client) {
    g_autofree char *why = ssl_error_text();
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot set up TLS: %s", why);
    gw_tls_free(t);
    return NULL;
  }
  SSL_CTX_set_min_proto_version(t->server, TLS1_2_VERSION);
  /* No SSL_MODE_AUTO_RETRY (on by default): the relay reads what has
   * arrived without waiting on records that carry no data (stream.c). */
  SSL_CTX_clear_mode(t->server, SSL_MODE_AUTO_RETRY);
  SSL_CTX_set_alpn_select_cb(t->server, alpn_select, NULL);
  SSL_CTX_set_session_cache_mode(t->server, SSL_SESS_CACHE_SERVER);
  SSL_CTX_set_options(t->server, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_options(t->client, SSL_OP_IGNORE_UNEXPECTED_EOF);

  SSL_CTX_set_min_proto_version(t->client, TLS1_2_VERSION);
  /* TLS 1.3 suites on both of the gateway's legs: AES-128-GCM first.
   * Every relayed byte is decrypted and encrypted again, so the cheaper
   * of the two AES suites (about 15% here) counts twice; both are
   * mandatory suites of TLS 1.3 and neither is weak.  Facing clients the
   * gateway's order wins, except that a client asking for ChaCha20 first
   * (one without AES instructions) gets it. */
  if (SSL_CTX_set_ciphersuites(t->server, GW_TLS13_SUITES) != 1 ||
      SSL_CTX_set_ciphersuites(t->client, GW_TLS13_SUITES) != 1) {
    g_autofree char *why = ssl_error_text();
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot set the TLS 1.3 suites: %s", why);
    gw_tls_free(t);
    return NULL;
  }
  SSL_CTX_set_options(t->server, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA);
  SSL_CTX_clear_mode(t->client, SSL_MODE_AUTO_RETRY);
  SSL_CTX_set_verify(t->client, SSL_VERIFY_PEER, NULL);
  if (SSL_CTX_set_default_verify_paths(t->client) != 1) {
    g_autofree char *why = ssl_error_text();
    g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot load the system's trust store: %s", why);
    gw_tls_free(t);
    return NULL;
  }
  for (const char *const *f = extra_ca_files; f && *f; f++) {
    if (SSL_CTX_load_verify_locations(t->client, *f, NULL) != 1) {
      g_autofree char *why = ssl_error_text();
      g_set_error(error, BOX_GATEWAY_ERROR, 1, "cannot load the CA file %s: %s", *f, why);
      gw_tls_free(t);
      return NULL;
    }
  }
  static const unsigned char h11[] = "\x08http/1.1";
  SSL_CTX_set_alpn_protos(t->client, h11, sizeof h11 - 1);
  gw_rec_setup(t->server);
  gw_rec_setup(t->client);
  return t;
}

void gw_tls_free(GwTls *t)
{
  if (!t) return;
  SSL_CTX_free(t->server);
  SSL_CTX_free(t->client);
  X509_free(t->ca);
  EVP_PKEY_free(t->ca_key);
  EVP_PKEY_free(t->leaf_key);
  g_free(t->ca_pem);
  g_hash_table_destroy(t->leaves);
  g_mutex_clear(&t->lock);
  g_free(t);
}

const char *gw_tls_ca_pem(const GwTls *t)
{
  return t->ca_pem;
}

/* The socket under ssl, with a buffer each way.  Reading: one recv brings
 * in every record that has arrived, and OpenSSL takes them from the buffer
 * (its own read-ahead would do the recv too, but moves the rest of its
 * buffer down after every record).  Writing: the records of one relay
 * write collect in the buffer and leave in one send when the relay
 * flushes, which costs the kernel, and the peer's wakeups, far less than
 * a send per record. */
static bool attach_socket(SSL *ssl, int fd, int read_buffer, int write_buffer)
{
  BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE);
  BIO *in = BIO_new(BIO_f_buffer());
  BIO *out = BIO_new(BIO_f_buffer());
  if (!sock || !in || !out || BIO_set_read_buffer_size(in, read_buffer) != 1 ||
      BIO_set_write_buffer_size(out, write_buffer) != 1 || !BIO_up_ref(sock)) {
    BIO_free(sock);
    BIO_free(in);
    BIO_free(out);
    return false;
  }
  BIO_push(in, sock);
  BIO_push(out, sock); /* each chain holds one reference to sock */
  SSL_set_bio(ssl, in, out);
  return true;
}

SSL *gw_tls_accept(GwTls *t, int fd, const char *host, GwRec **rec)
{
  *rec = NULL;
  g_mutex_lock(&t->lock);
  X509 *leaf = g_hash_table_lookup(t->leaves, host);
  if (!leaf) {
    leaf = make_leaf(t, host);
    if (leaf) g_hash_table_insert(t->leaves, g_strdup(host), leaf);
  }
  if (leaf) X509_up_ref(leaf);
  g_mutex_unlock(&t->lock);
  if (!leaf) return NULL;
  SSL *ssl = SSL_new(t->server);
  if (ssl) gw_rec_watch(ssl, true);
  bool ok = ssl && SSL_use_certificate(ssl, leaf) == 1 &&
            SSL_use_PrivateKey(ssl, t->leaf_key) == 1 &&
            attach_socket(ssl, fd, GW_TLS_SMALL_BUFFER, GW_TLS_BULK_BUFFER) && SSL_accept(ssl) == 1;
  X509_free(leaf);
  if (!ok) {
    ERR_clear_error();
    SSL_free(ssl);
    return NULL;
  }
  *rec = gw_rec_take(ssl, fd, GW_TLS_SMALL_BUFFER, GW_TLS_BULK_BUFFER);
  return ssl;
}

SSL *gw_tls_connect(GwTls *t, int fd, const char *host, bool first, char **why, bool *suite_refused,
                    GwRec **rec)
{
  *suite_refused = false;
  *rec = NULL;
  SSL *ssl = SSL_new(t->client);
  if (!ssl || (first && SSL_set_ciphersuites(ssl, GW_TLS13_FIRST) != 1)) {
    *why = ssl_error_text();
    SSL_free(ssl);
    return NULL;
  }
  gw_rec_watch(ssl, false);
  unsigned char bin[16];
  bool is_ip = inet_pton_any(host, bin);
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
  } else {
    SSL_set_tlsext_host_name(ssl, host);
    SSL_set1_host(ssl, host);
  }
  if (!attach_socket(ssl, fd, GW_TLS_BULK_BUFFER, GW_TLS_SMALL_BUFFER)) {
    *why = g_strdup("cannot set up TLS on the socket");
    SSL_free(ssl);
    return NULL;
  }
  if (SSL_connect(ssl) != 1) {
    long vr = SSL_get_verify_result(ssl);
    unsigned long e = ERR_peek_error();
    /* A server that refuses the lone suite of a first hello answers with
     * one of these alerts before it has shown a certificate. */
    *suite_refused = first && vr == X509_V_OK && ERR_GET_LIB(e) == ERR_LIB_SSL &&
                     (ERR_GET_REASON(e) == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE ||
                      ERR_GET_REASON(e) == SSL_R_TLSV1_ALERT_INSUFFICIENT_SECURITY ||
                      ERR_GET_REASON(e) == SSL_R_NO_SHARED_CIPHER);
    if (vr != X509_V_OK)
      *why = g_strdup_printf("the server's certificate is not trusted: %s",
                             X509_verify_cert_error_string(vr));
    else
      *why = ssl_error_text();
    ERR_clear_error();
    SSL_free(ssl);
    return NULL;
  }
  *rec = gw_rec_take(ssl, fd, GW_TLS_BULK_BUFFER, GW_TLS_SMALL_BUFFER);
  return ssl;
}
