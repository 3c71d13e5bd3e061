/* num.c — bc's numbers (see bc.h). */
#include <stdlib.h>
#include <string.h>

#include "shell/commands/bc/bc.h"

Num bc_num_zero(int scale)
{
  Num r = { false, scale, scale, g_malloc0((size_t)MAX(scale, 1)) };
  return r;
}

void bc_num_free(Num *a)
{
  g_free(a->d);
  a->d = NULL;
}

Num bc_num_copy(const Num *a)
{
  Num r = *a;
  r.d = g_memdup2(a->d, (size_t)MAX(a->n, 1));
  return r;
}

bool bc_num_is_zero(const Num *a)
{
  for (int i = 0; i < a->n; i++)
    if (a->d[i]) return false;
  return true;
}

/* Drops high zeros of the integer part; zero is never negative. */
void bc_num_norm(Num *a)
{
  while (a->n > a->scale && a->d[a->n - 1] == 0) a->n--;
  if (bc_num_is_zero(a)) a->neg = false;
}

Num bc_num_from_long(long v)
{
  Num r = bc_num_zero(0);
  unsigned long u = v < 0 ? -(unsigned long)v : (unsigned long)v;
  g_free(r.d);
  r.d = g_malloc0(24);
  while (u) {
    r.d[r.n++] = (unsigned char)(u % 10);
    u /= 10;
  }
  r.neg = v < 0;
  return r;
}

/* The digit of 10^k in a (0 outside). */
static int dig(const Num *a, int k)
{
  int i = k + a->scale;
  return i >= 0 && i < a->n ? a->d[i] : 0;
}

/* a with exactly `scale` fraction digits (truncating, or adding zeros). */
Num bc_num_rescale(const Num *a, int scale)
{
  int ip = a->n - a->scale;
  Num r = { a->neg, scale, ip + scale, g_malloc0((size_t)MAX(ip + scale, 1)) };
  for (int i = 0; i < r.n; i++) r.d[i] = (unsigned char)dig(a, i - scale);
  bc_num_norm(&r);
  return r;
}

static int cmp_abs(const Num *a, const Num *b)
{
  int hi = MAX(a->n - a->scale, b->n - b->scale), lo = -MAX(a->scale, b->scale);
  for (int k = hi - 1; k >= lo; k--) {
    int x = dig(a, k), y = dig(b, k);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

int bc_num_cmp(const Num *a, const Num *b)
{
  bool za = bc_num_is_zero(a), zb = bc_num_is_zero(b);
  bool na = a->neg && !za, nb = b->neg && !zb;
  if (na != nb) return na ? -1 : 1;
  int c = cmp_abs(a, b);
  return na ? -c : c;
}

/* |a| + |b| or |a| - |b| (|a| >= |b|), at the larger scale. */
static Num add_abs(const Num *a, const Num *b, bool sub)
{
  int scale = MAX(a->scale, b->scale);
  int hi = MAX(a->n - a->scale, b->n - b->scale) + 1;
  Num r = { false, scale, hi + scale, g_malloc0((size_t)(hi + scale)) };
  int carry = 0;
  for (int i = 0; i < r.n; i++) {
    int k = i - scale;
    int v = sub ? dig(a, k) - dig(b, k) - carry : dig(a, k) + dig(b, k) + carry;
    carry = sub ? v < 0 : v >= 10;
    r.d[i] = (unsigned char)(sub ? (v + 10) % 10 : v % 10);
  }
  return r;
}

Num bc_num_add(const Num *a, const Num *b, bool subtract)
{
  bool bneg = subtract ? !b->neg : b->neg;
  Num r;
  if (a->neg == bneg) {
    r = add_abs(a, b, false);
    r.neg = a->neg;
  } else if (cmp_abs(a, b) >= 0) {
    r = add_abs(a, b, true);
    r.neg = a->neg;
  } else {
    r = add_abs(b, a, true);
    r.neg = bneg;
  }
  bc_num_norm(&r);
  return r;
}

/* The exact product, then cut to `scale` digits. */
Num bc_num_mul(const Num *a, const Num *b, int scale)
{
  int n = a->n + b->n;
  unsigned *acc = g_malloc0(sizeof(unsigned) * (size_t)(n + 1));
  for (int i = 0; i < a->n; i++) {
    if (!a->d[i]) continue;
    for (int j = 0; j < b->n; j++) acc[i + j] += (unsigned)a->d[i] * b->d[j];
    if ((i & 31) == 31)
      for (int k = 0; k < n; k++) {
        acc[k + 1] += acc[k] / 10;
        acc[k] %= 10;
      }
  }
  Num full = { a->neg != b->neg, a->scale + b->scale, n, g_malloc0((size_t)MAX(n, 1)) };
  unsigned carry = 0;
  for (int k = 0; k < n; k++) {
    unsigned v = acc[k] + carry;
    full.d[k] = (unsigned char)(v % 10);
    carry = v / 10;
  }
  g_free(acc);
  Num r = bc_num_rescale(&full, MIN(scale, full.scale));
  bc_num_free(&full);
  return r;
}

/* The integer digits of |a| * 10^shift, most significant first. */
static GByteArray *int_digits(const Num *a, int shift)
{
  GByteArray *v = g_byte_array_new();
  for (int k = a->n - a->scale - 1; k >= -shift; k--) {
    unsigned char d = (unsigned char)dig(a, k);
    if (v->len || d) g_byte_array_append(v, &d, 1);
  }
  return v;
}

/* rem (most significant first, len digits) >= b? */
static int cmp_digits(const unsigned char *r, int rn, const unsigned char *b, int bn)
{
  while (rn > 0 && *r == 0) r++, rn--;
  if (rn != bn) return rn < bn ? -1 : 1;
  return memcmp(r, b, (size_t)rn);
}

/* a / b truncated to `scale` digits; false when b is zero. */
bool bc_num_div(const Num *a, const Num *b, int scale, Num *out)
{
  if (bc_num_is_zero(b)) return false;
  /* q = floor(|a| * 10^(scale + sb) / (|b| * 10^sb)) */
  GByteArray *x = int_digits(a, scale + b->scale), *y = int_digits(b, b->scale);
  int yn = (int)y->len;
  unsigned char *rem = g_malloc0((size_t)yn + 2);
  int rn = 0;
  GByteArray *q = g_byte_array_new();
  for (guint i = 0; i < x->len; i++) {
    if (rn == 0 && x->data[i] == 0 && q->len == 0) {
      unsigned char z = 0;
      g_byte_array_append(q, &z, 1);
      continue;
    }
    rem[rn++] = x->data[i];
    /* keep rem without leading zeros so it fits yn + 1 digits */
    int lead = 0;
    while (lead < rn - 1 && rem[lead] == 0) lead++;
    if (lead) {
      memmove(rem, rem + lead, (size_t)(rn - lead));
      rn -= lead;
    }
    unsigned char qd = 0;
    while (cmp_digits(rem, rn, y->data, yn) >= 0) {
      int borrow = 0;
      for (int k = 0; k < rn; k++) {
        int ri = rn - 1 - k, yi = yn - 1 - k;
        int v = rem[ri] - (yi >= 0 ? y->data[yi] : 0) - borrow;
        borrow = v < 0;
        rem[ri] = (unsigned char)(v < 0 ? v + 10 : v);
      }
      qd++;
    }
    g_byte_array_append(q, &qd, 1);
  }
  int qn = (int)q->len;
  Num r = { a->neg != b->neg, scale, MAX(qn, scale), g_malloc0((size_t)MAX(MAX(qn, scale), 1)) };
  for (int k = 0; k < qn; k++) r.d[k] = q->data[qn - 1 - k];
  bc_num_norm(&r);
  g_byte_array_free(x, TRUE);
  g_byte_array_free(y, TRUE);
  g_byte_array_free(q, TRUE);
  g_free(rem);
  *out = r;
  return true;
}

/* The integer part as a long; false when it does not fit. */
bool bc_num_to_long(const Num *a, long *out)
{
  long v = 0;
  for (int i = a->n - 1; i >= a->scale; i--) {
    if (v > (LONG_MAX - 9) / 10) return false;
    v = v * 10 + a->d[i];
  }
  *out = a->neg ? -v : v;
  return true;
}

/* length(): significant digits (the fraction's all count). */
int bc_num_length(const Num *a)
{
  int n = a->n;
  while (n > a->scale && a->d[n - 1] == 0) n--;
  if (n == a->scale) {
    /* below one: leading zeros of the fraction do not count */
    int k = n;
    while (k > 0 && a->d[k - 1] == 0) k--;
    return a->scale ? MAX(a->scale, 1) : 1;
  }
  return n;
}
