/* clinfer — the WorkSizes expression language of custom layers: integers,
 * the variables B F Y X, + - * / % (usual precedence, left-associative)
 * and parentheses, parsed once into postfix code and evaluated with
 * checked 64-bit integer arithmetic. */
#include "devices/opencl/ocl-custom.h"
#include <string.h>

typedef enum { WS_NUM, WS_VAR, WS_OP } WsKind;

typedef struct {
  WsKind kind;
  int64_t value;             /* NUM: the number; VAR: 0..3 (B F Y X) */
  char op;                   /* OP */
} WsCode;

struct _OclWsExpr {
  char *text;
  GArray *code;              /* WsCode, postfix */
};

typedef struct {
  const char *text;
  const char *p;
  GArray *code;
  char *why;
  int depth;                 /* parentheses open */
} WsParser;

#define WS_MAX_DEPTH 32

static void
skip_space (WsParser *ps)
{
  while (*ps->p == ' ' || *ps->p == '\t')
    ps->p++;
}

static gboolean
fail (WsParser *ps, const char *what)
{
  if (ps->why == NULL) {
    if (*ps->p)
      ps->why = g_strdup_printf ("%s '%c' at column %d", what, *ps->p,
          (int) (ps->p - ps->text) + 1);
    else
      ps->why = g_strdup_printf ("%s end of rule", what);
  }
  return FALSE;
}

static void
emit (WsParser *ps, WsKind kind, int64_t value, char op)
{
  WsCode c = { kind, value, op };

  g_array_append_val (ps->code, c);
}

static gboolean parse_sum (WsParser *ps);

static gboolean
parse_factor (WsParser *ps)
{
  static const char vars[] = "BFYX";
  const char *v;

  skip_space (ps);
  if (g_ascii_isdigit (*ps->p)) {
    int64_t n = 0;
    while (g_ascii_isdigit (*ps->p)) {
      if (n > (G_MAXINT64 - (*ps->p - '0')) / 10)
        return fail (ps, "number too large at");
      n = n * 10 + (*ps->p++ - '0');
    }
    emit (ps, WS_NUM, n, 0);
    return TRUE;
  }
  if (*ps->p && (v = strchr (vars, g_ascii_toupper (*ps->p)))) {
    ps->p++;
    if (g_ascii_isalnum (*ps->p) || *ps->p == '_')
      return fail (ps, "unexpected");
    emit (ps, WS_VAR, v - vars, 0);
    return TRUE;
  }
  if (*ps->p == '(') {
    if (++ps->depth > WS_MAX_DEPTH)
      return fail (ps, "parentheses nested too deeply at");
    ps->p++;
    if (!parse_sum (ps))
      return FALSE;
    ps->depth--;
    skip_space (ps);
    if (*ps->p != ')')
      return fail (ps, "expected ')' instead of");
    ps->p++;
    return TRUE;
  }
  return fail (ps, "unexpected");
}

static gboolean
parse_product (WsParser *ps)
{
  if (!parse_factor (ps))
    return FALSE;
  for (;;) {
    char op;
    skip_space (ps);
    op = *ps->p;
    if (op != '*' && op != '/' && op != '%')
      return TRUE;
    ps->p++;
    if (!parse_factor (ps))
      return FALSE;
    emit (ps, WS_OP, 0, op);
  }
}

static gboolean
parse_sum (WsParser *ps)
{
  if (!parse_product (ps))
    return FALSE;
  for (;;) {
    char op;
    skip_space (ps);
    op = *ps->p;
    if (op != '+' && op != '-')
      return TRUE;
    ps->p++;
    if (!parse_product (ps))
      return FALSE;
    emit (ps, WS_OP, 0, op);
  }
}

OclWsExpr *
clinfer_ocl_ws_parse (const char *text, char **why)
{
  WsParser ps = { text, text, g_array_new (FALSE, FALSE, sizeof (WsCode)),
    NULL, 0 };
  OclWsExpr *e;

  if (!parse_sum (&ps) || (skip_space (&ps), *ps.p != '\0')) {
    fail (&ps, "unexpected");
    *why = ps.why;
    g_array_unref (ps.code);
    return NULL;
  }
  e = g_new0 (OclWsExpr, 1);
  e->text = g_strdup (text);
  e->code = ps.code;
  return e;
}

gboolean
clinfer_ocl_ws_eval (const OclWsExpr *e, const int64_t vars[4],
    int64_t *value, char **why)
{
  int64_t stack[64];
  guint sp = 0;

  for (guint i = 0; i < e->code->len; i++) {
    const WsCode *c = &g_array_index (e->code, WsCode, i);
    int64_t a, b, r = 0;
    gboolean overflow = FALSE;

    if (c->kind != WS_OP) {
      if (sp == G_N_ELEMENTS (stack)) {
        *why = g_strdup ("rule too deeply nested");
        return FALSE;
      }
      stack[sp++] = c->kind == WS_NUM ? c->value : vars[c->value];
      continue;
    }
    b = stack[--sp];
    a = stack[--sp];
    switch (c->op) {
      case '+': overflow = __builtin_add_overflow (a, b, &r); break;
      case '-': overflow = __builtin_sub_overflow (a, b, &r); break;
      case '*': overflow = __builtin_mul_overflow (a, b, &r); break;
      default:
        if (b == 0) {
          *why = g_strdup_printf ("division by zero (%c 0)", c->op);
          return FALSE;
        }
        overflow = a == G_MININT64 && b == -1;
        r = overflow ? 0 : c->op == '/' ? a / b : a % b;
    }
    if (overflow) {
      *why = g_strdup ("integer overflow");
      return FALSE;
    }
    stack[sp++] = r;
  }
  *value = stack[0];
  return TRUE;
}

const char *
clinfer_ocl_ws_text (const OclWsExpr *e)
{
  return e->text;
}

void
clinfer_ocl_ws_free (OclWsExpr *e)
{
  if (e == NULL)
    return;
  g_array_unref (e->code);
  g_free (e->text);
  g_free (e);
}
