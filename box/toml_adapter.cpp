// toml_adapter.cpp — the one C++ file: TOML text -> json-c objects.
//
// Debian has no C TOML library, so box.toml is parsed with toml++ and the
// document is handed to the rest of the code as json-c objects.  Tables
// become objects, arrays become arrays, integers are int64, floats double,
// booleans bool, and dates/times/date-times become their TOML spelling as
// strings.  Nothing escapes this file as a C++ exception.

#include <toml++/toml.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <glib.h>
#include <json-c/json.h>

#include "box/config.h"

namespace {

json_object *convert_node(const toml::node &node);

template <typename T> json_object *as_text(const T &value)
{
  std::ostringstream out;
  out << value;
  const std::string s = out.str();
  return json_object_new_string_len(s.data(), static_cast<int>(s.size()));
}

json_object *convert_table(const toml::table &table)
{
  json_object *obj = json_object_new_object();
  if (!obj) throw std::bad_alloc();
  for (auto &&[key, value] : table) {
    json_object *child = convert_node(value);
    const std::string k(key.str());
    if (json_object_object_add(obj, k.c_str(), child) != 0) {
      json_object_put(child);
      json_object_put(obj);
      throw std::bad_alloc();
    }
  }
  return obj;
}

json_object *convert_array(const toml::array &array)
{
  json_object *arr = json_object_new_array_ext(static_cast<int>(array.size()));
  if (!arr) throw std::bad_alloc();
  for (const toml::node &value : array) {
    json_object *child = convert_node(value);
    if (json_object_array_add(arr, child) != 0) {
      json_object_put(child);
      json_object_put(arr);
      throw std::bad_alloc();
    }
  }
  return arr;
}

json_object *convert_node(const toml::node &node)
{
  json_object *out = nullptr;
  switch (node.type()) {
  case toml::node_type::table: return convert_table(*node.as_table());
  case toml::node_type::array: return convert_array(*node.as_array());
  case toml::node_type::string: {
    const std::string &s = node.as_string()->get();
    out = json_object_new_string_len(s.data(), static_cast<int>(s.size()));
    break;
  }
  case toml::node_type::integer:
    out = json_object_new_int64(static_cast<int64_t>(node.as_integer()->get()));
    break;
  case toml::node_type::floating_point:
    out = json_object_new_double(node.as_floating_point()->get());
    break;
  case toml::node_type::boolean:
    out = json_object_new_boolean(node.as_boolean()->get() ? 1 : 0);
    break;
  case toml::node_type::date: out = as_text(node.as_date()->get()); break;
  case toml::node_type::time: out = as_text(node.as_time()->get()); break;
  case toml::node_type::date_time: out = as_text(node.as_date_time()->get()); break;
  case toml::node_type::none:
  default: throw std::runtime_error("a value of no TOML type");
  }
  if (!out) throw std::bad_alloc();
  return out;
}

char *format_error(const toml::parse_error &err)
{
  const toml::source_position &pos = err.source().begin;
  const std::string_view desc = err.description();
  return g_strdup_printf("line %u, column %u: %.*s", static_cast<unsigned>(pos.line),
                         static_cast<unsigned>(pos.column), static_cast<int>(desc.size()),
                         desc.data());
}

} // namespace

extern "C" json_object *box_toml_parse(const char *text, char **error_message)
{
  if (error_message) *error_message = nullptr;
  if (!text) {
    if (error_message) *error_message = g_strdup("line 1, column 1: no text to parse");
    return nullptr;
  }
  try {
    const std::string_view src(text, std::strlen(text));
#if TOML_EXCEPTIONS
    toml::table table;
    try {
      table = toml::parse(src);
    } catch (const toml::parse_error &err) {
      if (error_message) *error_message = format_error(err);
      return nullptr;
    }
    return convert_table(table);
#else
    toml::parse_result result = toml::parse(src);
    if (!result) {
      if (error_message) *error_message = format_error(result.error());
      return nullptr;
    }
    return convert_table(result.table());
#endif
  } catch (const std::exception &e) {
    if (error_message) *error_message = g_strdup_printf("line 0, column 0: %s", e.what());
  } catch (...) {
    if (error_message)
      *error_message = g_strdup("line 0, column 0: unexpected failure while parsing TOML");
  }
  return nullptr;
}
