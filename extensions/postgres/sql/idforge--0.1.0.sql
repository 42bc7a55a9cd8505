-- idforge 0.1.0: unique ids inside PostgreSQL. Written by hand (pgrx's generator needs
-- cargo-pgrx); each function's C symbol is its Rust name with `_wrapper`, and
-- ci/steps/pg-extension.sh calls every one of them.
\echo Use "CREATE EXTENSION idforge" to load this file. \quit

CREATE FUNCTION idforge_snowflake(layout text DEFAULT 'twitter') RETURNS bigint
  STRICT VOLATILE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_snowflake_wrapper';
COMMENT ON FUNCTION idforge_snowflake(text) IS
  'A snowflake id from the one generator of this layout that every backend shares; the node is idforge.node_id';

CREATE FUNCTION idforge_objectid() RETURNS text
  STRICT VOLATILE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_objectid_wrapper';
COMMENT ON FUNCTION idforge_objectid() IS 'A new MongoDB ObjectId, as 24 hex digits';

CREATE FUNCTION idforge_objectid_bytes() RETURNS bytea
  STRICT VOLATILE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_objectid_bytes_wrapper';
COMMENT ON FUNCTION idforge_objectid_bytes() IS 'A new MongoDB ObjectId, as its 12 bytes';

CREATE FUNCTION idforge_flake128() RETURNS uuid
  STRICT VOLATILE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_flake128_wrapper';
COMMENT ON FUNCTION idforge_flake128() IS
  'A new flake-128 id (64-bit ms, 48-bit worker, 16-bit sequence) as a uuid; uuid order is id order';

CREATE FUNCTION idforge_decode(id bigint, layout text DEFAULT 'twitter')
  RETURNS TABLE ("time" timestamptz, node bigint, seq bigint)
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c ROWS 1
  AS 'MODULE_PATHNAME', 'idforge_decode_wrapper';
COMMENT ON FUNCTION idforge_decode(bigint, text) IS
  'The time (start of its tick), node and sequence of a snowflake id';

CREATE FUNCTION idforge_compose(ts timestamptz, layout text DEFAULT 'twitter', node bigint DEFAULT 0, seq bigint DEFAULT 0)
  RETURNS bigint
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_compose_wrapper';
COMMENT ON FUNCTION idforge_compose(timestamptz, text, bigint, bigint) IS
  'The snowflake id of a time (truncated to its tick), node and sequence';

CREATE FUNCTION idforge_bounds(ts timestamptz, layout text DEFAULT 'twitter')
  RETURNS TABLE ("min" bigint, "max" bigint)
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c ROWS 1
  AS 'MODULE_PATHNAME', 'idforge_bounds_wrapper';
COMMENT ON FUNCTION idforge_bounds(timestamptz, text) IS
  'The smallest and largest ids of the tick holding ts: for WHERE id BETWEEN on an id column';

CREATE FUNCTION idforge_uuid7() RETURNS uuid
  STRICT VOLATILE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_uuid7_wrapper';
COMMENT ON FUNCTION idforge_uuid7() IS
  'A new UUIDv7 (RFC 9562: Unix ms, an 18-bit counter, 56 random bits) from the one generator every backend shares: strictly increasing across the cluster and its restarts';

CREATE FUNCTION idforge_ulid() RETURNS text
  STRICT VOLATILE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_ulid_wrapper';
COMMENT ON FUNCTION idforge_ulid() IS
  'A new ULID (26 characters, Crockford base32) from the one generator every backend shares: strictly increasing across the cluster and its restarts';

CREATE FUNCTION idforge_uuid7_parse(text text) RETURNS uuid
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_uuid7_parse_wrapper';
COMMENT ON FUNCTION idforge_uuid7_parse(text) IS
  'The UUIDv7 written in text (hyphenated, 32 hex digits, braces or urn:uuid:, either case); other versions are INVALID_UUID';

CREATE FUNCTION idforge_uuid7_time(id uuid) RETURNS timestamptz
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_uuid7_time_wrapper';
COMMENT ON FUNCTION idforge_uuid7_time(uuid) IS 'The time (Unix ms) of a UUIDv7; other versions are INVALID_UUID';

CREATE FUNCTION idforge_uuid_to_ulid(id uuid) RETURNS text
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_uuid_to_ulid_wrapper';
COMMENT ON FUNCTION idforge_uuid_to_ulid(uuid) IS 'The ULID text of a uuid''s 128 bits (a UUIDv7''s time is the ULID''s)';

CREATE FUNCTION idforge_ulid_to_uuid(text text) RETURNS uuid
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_ulid_to_uuid_wrapper';
COMMENT ON FUNCTION idforge_ulid_to_uuid(text) IS 'The 128 bits of a ULID (26 characters, either case) as a uuid';

CREATE FUNCTION idforge_id_to_text(id bigint, form text DEFAULT 'base32') RETURNS text
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_id_to_text_wrapper';
COMMENT ON FUNCTION idforge_id_to_text(bigint, text) IS
  'A 64-bit id (its bits; a negative bigint is an unsigned id past 2^63 - 1) written as decimal, base32 (13 Crockford characters, the default; sorts like the ids) or base62 (11 characters; sorts like the ids under COLLATE "C")';

CREATE FUNCTION idforge_id_from_text(text text, form text DEFAULT 'base32') RETURNS bigint
  STRICT IMMUTABLE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_id_from_text_wrapper';
COMMENT ON FUNCTION idforge_id_from_text(text, text) IS
  'The id whose text in form (decimal, base32 the default, base62) is text: only its one text (base32 in either case), else INVALID_DECIMAL, INVALID_BASE32 or INVALID_BASE62';

CREATE FUNCTION idforge_describe(id text, type text DEFAULT NULL, layout text DEFAULT 'twitter') RETURNS jsonb
  CALLED ON NULL INPUT IMMUTABLE PARALLEL SAFE LANGUAGE c
  AS 'MODULE_PATHNAME', 'idforge_describe_wrapper';
COMMENT ON FUNCTION idforge_describe(text, text, text) IS
  'The fields of any id written as text (a snowflake in decimal, an ObjectId, a flake-128, a UUIDv7 or a ULID; its type detected unless named), as idforge decode gives them: 64-bit values as strings; layout reads snowflakes';

