#!/usr/bin/env python3
"""Generate samsa-protocol's message structs and descriptor tables.

Reads the message descriptions (schema/NAME.kpm; format: schema/README.md) and
writes messages.h (C structs, descriptor declarations, typed wrappers, API key
constants) and messages.c (descriptor tables and the API table).

    kpgen.py --out-c messages.c --out-h messages.h schema/NAME.kpm...
    kpgen.py --check schema/NAME.kpm...   # validate only
"""

import argparse
import re
import sys

INT16_MAX = 32767
SCALARS = {
    "bool": ("KP_T_BOOL", "bool"),
    "int8": ("KP_T_INT8", "int8_t"),
    "int16": ("KP_T_INT16", "int16_t"),
    "uint16": ("KP_T_UINT16", "uint16_t"),
    "int32": ("KP_T_INT32", "int32_t"),
    "int64": ("KP_T_INT64", "int64_t"),
    "float64": ("KP_T_FLOAT64", "double"),
    "string": ("KP_T_STRING", "struct kp_str"),
    "bytes": ("KP_T_BYTES", "struct kp_bytes"),
    "records": ("KP_T_RECORDS", "struct kp_bytes"),
    "uuid": ("KP_T_UUID", "struct kp_uuid"),
}
INT_TYPES = {"int8": (-128, 127), "int16": (-32768, 32767), "uint16": (0, 65535),
             "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}
NULLABLE_TYPES = {"string", "bytes", "records"}
DEFAULT_MAX_COUNT = 1000000
NAME_RE = re.compile(r"^[A-Z][A-Za-z0-9]*$")


class SchemaError(Exception):
    pass


class Struct:
    def __init__(self, name):
        self.name = name
        self.fields = []


class Field:
    def __init__(self):
        self.name = None
        self.type = None      # scalar name or "array"
        self.elem = None      # scalar element type for arrays of scalars
        self.sub = None       # Struct for arrays of structs
        self.vmin = 0
        self.vmax = INT16_MAX
        self.nmin = INT16_MAX
        self.nmax = -1
        self.default = None
        self.max_count = DEFAULT_MAX_COUNT


class Message:
    def __init__(self, name, api, kind, vmin, vmax, flex):
        self.name = name
        self.api = api
        self.kind = kind
        self.vmin = vmin
        self.vmax = vmax
        self.flex = flex
        self.root = Struct(name)
        self.structs = {}


def parse_versions(text, where):
    m = re.fullmatch(r"v(\d+)(\+|-(\d+))?", text)
    if not m:
        raise SchemaError(f"{where}: bad version range '{text}' (vA, vA+ or vA-B)")
    lo = int(m.group(1))
    if m.group(2) is None:
        hi = lo
    elif m.group(2) == "+":
        hi = INT16_MAX
    else:
        hi = int(m.group(3))
    if hi < lo:
        raise SchemaError(f"{where}: empty version range '{text}'")
    return lo, hi


def parse_int(text, where):
    try:
        return int(text, 0)
    except ValueError:
        raise SchemaError(f"{where}: bad integer '{text}'") from None


def parse_message_line(words, where):
    if len(words) < 2 or not NAME_RE.match(words[1]):
        raise SchemaError(f"{where}: 'message' needs a CamelCase name")
    opts = {}
    for w in words[2:]:
        if "=" not in w:
            raise SchemaError(f"{where}: expected key=value, got '{w}'")
        k, v = w.split("=", 1)
        opts[k] = v
    for k in ("api", "type", "versions", "flex"):
        if k not in opts:
            raise SchemaError(f"{where}: message lacks {k}=")
    unknown = set(opts) - {"api", "type", "versions", "flex"}
    if unknown:
        raise SchemaError(f"{where}: unknown message option(s) {sorted(unknown)}")
    if opts["type"] not in ("request", "response"):
        raise SchemaError(f"{where}: type must be request or response")
    m = re.fullmatch(r"(\d+)-(\d+)", opts["versions"])
    if not m or int(m.group(2)) < int(m.group(1)):
        raise SchemaError(f"{where}: versions must be A-B")
    flex = INT16_MAX if opts["flex"] == "none" else parse_int(opts["flex"], where)
    name = words[1]
    suffix = "Request" if opts["type"] == "request" else "Response"
    if not name.endswith(suffix):
        raise SchemaError(f"{where}: a {opts['type']} message's name must end in {suffix}")
    return Message(name, parse_int(opts["api"], where), opts["type"],
                   int(m.group(1)), int(m.group(2)), flex)


def parse_field_line(words, msg, where):
    f = Field()
    if len(words) < 2:
        raise SchemaError(f"{where}: a field needs a name and a type")
    f.name = words[0]
    if not NAME_RE.match(f.name):
        raise SchemaError(f"{where}: field name '{f.name}' must be CamelCase")
    t = words[1]
    sub_name = None
    if t.startswith("[]"):
        inner = t[2:]
        f.type = "array"
        if inner in SCALARS:
            f.elem = inner
        elif NAME_RE.match(inner):
            sub_name = inner
        else:
            raise SchemaError(f"{where}: bad array element type '{inner}'")
    elif t in SCALARS:
        f.type = t
    else:
        raise SchemaError(f"{where}: unknown type '{t}'")
    f.vmin, f.vmax = msg.vmin, INT16_MAX
    nullable = None
    for w in words[2:]:
        if w.startswith("v") and re.match(r"v\d", w):
            f.vmin, f.vmax = parse_versions(w, where)
        elif w == "nullable":
            nullable = "all"
        elif w.startswith("nullable="):
            nullable = parse_versions(w.split("=", 1)[1], where)
        elif w.startswith("default="):
            f.default = w.split("=", 1)[1]
        elif w.startswith("max="):
            if f.type != "array":
                raise SchemaError(f"{where}: max= applies to arrays only")
            f.max_count = parse_int(w.split("=", 1)[1], where)
            if not 0 <= f.max_count <= 2**31 - 1:
                raise SchemaError(f"{where}: max= out of range")
        else:
            raise SchemaError(f"{where}: unknown field option '{w}'")
    if f.vmin > msg.vmax:
        raise SchemaError(f"{where}: field '{f.name}' starts at v{f.vmin}, above the "
                          f"message's supported v{msg.vmax}: leave it out")
    if nullable is not None:
        if f.type != "array" and f.type not in NULLABLE_TYPES:
            raise SchemaError(f"{where}: type {f.type} cannot be nullable")
        if nullable == "all":
            f.nmin, f.nmax = f.vmin, f.vmax
        else:
            f.nmin, f.nmax = nullable
    check_default(f, where)
    return f, sub_name


def check_default(f, where):
    if f.default is None:
        return
    d = f.default
    if f.type in INT_TYPES:
        v = parse_int(d, where)
        lo, hi = INT_TYPES[f.type]
        if not lo <= v <= hi:
            raise SchemaError(f"{where}: default {d} does not fit {f.type}")
    elif f.type == "bool":
        if d not in ("true", "false"):
            raise SchemaError(f"{where}: bool default must be true or false")
    elif f.type in ("string", "bytes", "records"):
        if d not in ("null", '""'):
            raise SchemaError(f"{where}: {f.type} default must be null or \"\"")
        if d == "null" and f.nmax < f.nmin:
            raise SchemaError(f"{where}: default=null on a field that is never nullable")
    else:
        raise SchemaError(f"{where}: type {f.type} takes no default")


def parse_file(path):
    messages = []
    msg = None
    # containers[k] holds the fields found at indent level k + 1
    containers = []
    pending = None  # (struct, level of its array field) still without fields
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    for no, raw in enumerate(lines, 1):
        where = f"{path}:{no}"
        if "\t" in raw:
            raise SchemaError(f"{where}: tabs are not allowed; indent with two spaces")
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        words = line.split()
        if pending is not None and indent // 2 != pending[1] + 1:
            raise SchemaError(f"{where}: array of struct '{pending[0].name}' has no fields")
        pending = None
        if indent == 0:
            if words[0] != "message":
                raise SchemaError(f"{where}: expected 'message' at column 0")
            msg = parse_message_line(words, where)
            messages.append(msg)
            containers = [msg.root]
            continue
        if msg is None:
            raise SchemaError(f"{where}: field outside a message")
        if indent % 2 != 0:
            raise SchemaError(f"{where}: indent by multiples of two spaces")
        level = indent // 2
        if level > len(containers):
            raise SchemaError(f"{where}: unexpected indentation")
        del containers[level:]
        parent = containers[level - 1]
        f, sub_name = parse_field_line(words, msg, where)
        if any(x.name == f.name for x in parent.fields):
            raise SchemaError(f"{where}: field '{f.name}' defined twice")
        parent.fields.append(f)
        if sub_name is not None:
            if sub_name in msg.structs or sub_name == msg.name:
                raise SchemaError(f"{where}: struct '{sub_name}' defined twice in {msg.name}")
            s = Struct(sub_name)
            msg.structs[sub_name] = s
            f.sub = s
            containers.append(s)
            pending = (s, level)
    if pending is not None:
        raise SchemaError(f"{path}: array of struct '{pending[0].name}' has no fields")
    return messages


def upper_snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def cname(msg, struct):
    if struct is msg.root:
        return f"kp_{msg.name}"
    return f"kp_{msg.name}_{struct.name}"


def post_order(s, out):
    for f in s.fields:
        if f.sub is not None:
            post_order(f.sub, out)
    out.append(s)


def field_ctype(msg, f):
    if f.type != "array":
        return SCALARS[f.type][1]
    item = SCALARS[f.elem][1] if f.elem else f"struct {cname(msg, f.sub)}"
    return f"struct {{ {item} *items; int32_t count; }}"


def c_int64(v):
    if v == -2**63:
        return "INT64_MIN"
    return f"INT64_C({v})"


def field_default(f):
    if f.type in INT_TYPES:
        return parse_int(f.default, "") if f.default is not None else 0
    if f.type == "bool":
        return 1 if f.default == "true" else 0
    if f.type in ("string", "bytes", "records"):
        if f.default is not None:
            return 1 if f.default == "null" else 0
        return 1 if f.nmax >= f.nmin else 0
    return 0


def emit_header(messages, apis):
    out = []
    w = out.append
    w("/* samsa-protocol message structs: generated by gen/kpgen.py from")
    w(" * the schema/ descriptions (.kpm) at build time. Do not edit; edit the descriptions. */")
    w("#ifndef SAMSA_PROTOCOL_MESSAGES_H")
    w("#define SAMSA_PROTOCOL_MESSAGES_H")
    w("")
    w("#include <samsa-protocol/schema.h>")
    w("")
    w("/* Kafka API keys, as Kafka names them. */")
    w("enum kp_api_key {")
    for key, api_name, _, _ in apis:
        w(f"    KP_API_{upper_snake(api_name)} = {key},")
    w("};")
    w("")
    for msg in messages:
        structs = []
        post_order(msg.root, structs)
        w(f"/* ---- {msg.name} (key {msg.api}, v{msg.vmin}-{msg.vmax}) */")
        for s in structs:
            w(f"struct {cname(msg, s)} {{")
            if not s.fields:
                w("    char unused_; /* no fields in any supported version */")
            for f in s.fields:
                vers = f"v{f.vmin}+" if f.vmax == INT16_MAX else f"v{f.vmin}-{f.vmax}"
                w(f"    {field_ctype(msg, f)} {f.name}; /* {vers} */")
            w("};")
        w(f"extern const struct kp_msg_desc kp_{msg.name}_desc;")
        n = msg.name
        w(f"KP_MUST_CHECK static inline int kp_{n}_decode(struct kp_reader *r, int16_t version,")
        w(f"        struct kp_arena *arena, struct kp_{n} *out)")
        w("{")
        w(f"    return kp_msg_decode(&kp_{n}_desc, version, r, arena, out);")
        w("}")
        w(f"KP_MUST_CHECK static inline int kp_{n}_encode(struct kp_writer *w, int16_t version,")
        w(f"        const struct kp_{n} *msg)")
        w("{")
        w(f"    return kp_msg_encode(&kp_{n}_desc, version, w, msg);")
        w("}")
        w(f"static inline void kp_{n}_init(struct kp_{n} *msg)")
        w("{")
        w(f"    kp_msg_init(&kp_{n}_desc, msg);")
        w("}")
        w("")
    w("#endif")
    return "\n".join(out) + "\n"


def emit_c(messages, apis):
    out = []
    w = out.append
    w("/* samsa-protocol descriptor tables: generated by gen/kpgen.py from")
    w(" * the schema/ descriptions (.kpm) at build time. Do not edit; edit the descriptions. */")
    w("#include <samsa-protocol/messages.h>")
    w("")
    w("#include <stddef.h>")
    w("#include <stdint.h>")
    w("")
    for msg in messages:
        structs = []
        post_order(msg.root, structs)
        for s in structs:
            cn = cname(msg, s)
            tag = cn[3:]
            if s.fields:
                w(f"static const struct kp_field f_{tag}[] = {{")
                for f in s.fields:
                    if f.type == "array":
                        t, elem = "KP_T_ARRAY", SCALARS[f.elem][0] if f.elem else "0"
                        w(f"    /* arrays share struct kp_array_any's layout */")
                    else:
                        t, elem = SCALARS[f.type][0], "0"
                    sub = f"&s_{cname(msg, f.sub)[3:]}" if f.sub is not None else "NULL"
                    w(f"    {{.name = \"{f.name}\", .offset = offsetof(struct {cn}, {f.name}),")
                    w(f"     .type = {t}, .elem = {elem}, .ver_min = {f.vmin}, .ver_max = {f.vmax},")
                    w(f"     .null_min = {f.nmin}, .null_max = {f.nmax}, .max_count = {f.max_count},")
                    w(f"     .dflt = {c_int64(field_default(f))}, .sub = {sub}}},")
                w("};")
                for f in s.fields:
                    if f.type == "array":
                        w(f"_Static_assert(offsetof(struct {cn}, {f.name}.count) - "
                          f"offsetof(struct {cn}, {f.name}) == offsetof(struct kp_array_any, count), "
                          f"\"array layout\");")
            w(f"static const struct kp_struct_desc s_{tag} = {{")
            w(f"    .name = \"{tag}\", .size = sizeof(struct {cn}),")
            if s.fields:
                w(f"    .nfields = {len(s.fields)}, .fields = f_{tag},")
            else:
                w("    .nfields = 0, .fields = NULL,")
            w("};")
        w(f"const struct kp_msg_desc kp_{msg.name}_desc = {{")
        w(f"    .name = \"{msg.name}\", .api_key = {msg.api},")
        w(f"    .is_request = {'true' if msg.kind == 'request' else 'false'},")
        w(f"    .min_version = {msg.vmin}, .max_version = {msg.vmax},")
        w(f"    .first_flexible = {msg.flex}, .body = &s_{msg.name},")
        w("};")
        w("")
    w("const struct kp_api kp_apis[] = {")
    for key, api_name, req, resp in apis:
        w(f"    {{.key = {key}, .name = \"{api_name}\", .min_version = {req.vmin},")
        w(f"     .max_version = {req.vmax}, .first_flexible = {req.flex},")
        w(f"     .request = &kp_{req.name}_desc, .response = &kp_{resp.name}_desc}},")
    w("};")
    w("const size_t kp_apis_count = sizeof kp_apis / sizeof kp_apis[0];")
    return "\n".join(out) + "\n"


def pair_apis(messages):
    by_key = {}
    for m in messages:
        slot = by_key.setdefault(m.api, {})
        if m.kind in slot:
            raise SchemaError(f"two {m.kind}s for API key {m.api}: "
                              f"{slot[m.kind].name} and {m.name}")
        slot[m.kind] = m
    apis = []
    for key in sorted(by_key):
        slot = by_key[key]
        if "request" not in slot or "response" not in slot:
            raise SchemaError(f"API key {key} lacks a request or a response")
        req, resp = slot["request"], slot["response"]
        api_name = req.name[: -len("Request")]
        if resp.name != api_name + "Response":
            raise SchemaError(f"API key {key}: {req.name} pairs with {resp.name}")
        if (req.vmin, req.vmax, req.flex) != (resp.vmin, resp.vmax, resp.flex):
            raise SchemaError(f"API {api_name}: request and response versions/flex differ")
        apis.append((key, api_name, req, resp))
    return apis


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-c")
    ap.add_argument("--out-h")
    ap.add_argument("--check", action="store_true", help="validate only")
    ap.add_argument("schemas", nargs="+")
    args = ap.parse_args()
    try:
        messages = []
        for p in args.schemas:
            messages.extend(parse_file(p))
        apis = pair_apis(messages)
    except SchemaError as e:
        print(f"kpgen: {e}", file=sys.stderr)
        return 1
    if args.check:
        print(f"kpgen: {len(messages)} messages, {len(apis)} APIs: OK")
        return 0
    if not args.out_c or not args.out_h:
        ap.error("--out-c and --out-h are required unless --check")
    with open(args.out_h, "w", encoding="utf-8") as fh:
        fh.write(emit_header(messages, apis))
    with open(args.out_c, "w", encoding="utf-8") as fh:
        fh.write(emit_c(messages, apis))
    return 0


if __name__ == "__main__":
    sys.exit(main())
