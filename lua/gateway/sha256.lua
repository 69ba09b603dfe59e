-- SHA-256 and HMAC-SHA-256 through LuaJIT's ffi over the OpenSSL that nginx already links. The
-- low-level SHA256_* calls, not EVP or HMAC(): OpenSSL 3 looks an algorithm up in its provider
-- tables on every EVP/HMAC one-shot call, which cost more than the hash of a 43-byte secret.
-- One context and one output buffer per worker, reused: nothing here yields.
local ffi = require("ffi")
local C = ffi.C

ffi.cdef([[
typedef struct gateway_sha256_ctx {
  unsigned int h[8];
  unsigned int Nl, Nh;
  unsigned int data[16];
  unsigned int num, md_len;
} gateway_sha256_ctx;
int SHA256_Init(gateway_sha256_ctx *c);
int SHA256_Update(gateway_sha256_ctx *c, const void *data, size_t len);
int SHA256_Final(unsigned char *md, gateway_sha256_ctx *c);
]])

local M = {}

local CTX_SIZE = ffi.sizeof("gateway_sha256_ctx")
local ctx = ffi.new("gateway_sha256_ctx")
local out = ffi.new("unsigned char[32]")
-- HMAC's key schedule, hashed once: the states after the inner and the outer padded key.
local inner = ffi.new("gateway_sha256_ctx")
local outer = ffi.new("gateway_sha256_ctx")
local keyed = false

-- The raw 32-byte digest of `text`.
function M.digest(text)
  C.SHA256_Init(ctx)
  C.SHA256_Update(ctx, text, #text)
  C.SHA256_Final(out, ctx)
  return ffi.string(out, 32)
end

-- Sets the HMAC key (at most 64 bytes, as every key here is).
function M.set_hmac_key(key)
  assert(#key <= 64, "HMAC key longer than a block")
  local ipad, opad = {}, {}
  for i = 1, 64 do
    local b = i <= #key and key:byte(i) or 0
    ipad[i] = string.char(bit.bxor(b, 0x36))
    opad[i] = string.char(bit.bxor(b, 0x5c))
  end
  C.SHA256_Init(inner)
  C.SHA256_Update(inner, table.concat(ipad), 64)
  C.SHA256_Init(outer)
  C.SHA256_Update(outer, table.concat(opad), 64)
  keyed = true
end

-- The raw 32-byte HMAC-SHA-256 of `text` under the key set above (RFC 2104).
function M.hmac(text)
  assert(keyed, "sha256.set_hmac_key() was not called")
  ffi.copy(ctx, inner, CTX_SIZE)
  C.SHA256_Update(ctx, text, #text)
  C.SHA256_Final(out, ctx)
  ffi.copy(ctx, outer, CTX_SIZE)
  C.SHA256_Update(ctx, out, 32)
  C.SHA256_Final(out, ctx)
  return ffi.string(out, 32)
end

-- Pure: lower-case hex of 64 digits → the 32 raw bytes, or nil for anything else.
function M.from_hex(hex)
  if type(hex) ~= "string" or #hex ~= 64 or hex:find("[^0-9a-f]") then
    return nil
  end
  return (hex:gsub("..", function(pair)
    return string.char(tonumber(pair, 16))
  end))
end

return M
