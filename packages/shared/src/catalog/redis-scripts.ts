/**
 * The catalog's Lua scripts: every state change runs as one script, so it is atomic against
 * other API replicas and workers. ARGV[1] is always the key namespace (`${prefix}:catalog`);
 * the scripts build the keys themselves because a document's keys depend on its collection's
 * generation, which only the script can read atomically. Key layout (ns = ARGV[1]):
 *
 *   ns:collections               sorted set, score 0: collection names (lexicographic order)
 *   ns:coll:<c>                  hash: gen, documents, queued, processing, ready, failed
 *   ns:docs:<c>:<gen>            sorted set, score 0: the collection's doc ids
 *   ns:doc:<c>:<gen>:<docId>     hash: one DocumentRecord (metadata as JSON; null = field absent)
 *   ns:fields:<c>:<gen>          set: every metadata key a document of the collection was loaded with
 *   ns:gen                       counter handing out generations
 *   ns:trash                     set of "<c>:<gen>" whose documents are still being removed
 *   ns:pending                   sorted set, score 0: "<updatedAt><c>:<docId>" of each queued or
 *                                processing document (updatedAt is a 24-character ISO instant, so
 *                                the set is in order of last change); a dropped collection's are
 *                                removed as its documents are purged
 *
 * A collection name cannot contain ':' and a generation is digits, so no two keys collide
 * even though doc ids may contain ':'. Dropping a collection removes `ns:coll:<c>` at once;
 * its documents live under the old generation, unreachable, until purged in chunks.
 */

/** Shared prologue: the collection's hash and generation (false when it does not exist). */
const PROLOGUE = `
local ns, c = ARGV[1], ARGV[2]
local ck = ns .. ':coll:' .. c
local gen = redis.call('HGET', ck, 'gen')
local function docsKey() return ns .. ':docs:' .. c .. ':' .. gen end
local function docKey(id) return ns .. ':doc:' .. c .. ':' .. gen .. ':' .. id end
local function fieldsKey() return ns .. ':fields:' .. c .. ':' .. gen end
local function move(from, to)
  redis.call('HINCRBY', ck, from, -1)
  redis.call('HINCRBY', ck, to, 1)
end
local function isPending(status) return status == 'queued' or status == 'processing' end
-- Keeps ns:pending in step with one document's change of status and instant.
local function repend(id, oldStatus, oldAt, newStatus, newAt)
  local pk = ns .. ':pending'
  if oldStatus and isPending(oldStatus) and oldAt then redis.call('ZREM', pk, oldAt .. c .. ':' .. id) end
  if newStatus and isPending(newStatus) then redis.call('ZADD', pk, 0, newAt .. c .. ':' .. id) end
end
`;

/** ARGV: ns, c, docId, now, jobId, metadata, contentType, blobKey, size, sha256, hasFilename, filename. */
const ACCEPT = `${PROLOGUE}
local id, now = ARGV[3], ARGV[4]
if not gen then
  gen = tostring(redis.call('INCR', ns .. ':gen'))
  redis.call('HSET', ck, 'gen', gen, 'documents', 0, 'queued', 0, 'processing', 0, 'ready', 0, 'failed', 0)
  redis.call('ZADD', ns .. ':collections', 0, c)
end
local dk = docKey(id)
local prev = redis.call('HGETALL', dk)
local version, created = 1, now
if #prev > 0 then
  local old = {}
  for i = 1, #prev, 2 do old[prev[i]] = prev[i + 1] end
  version = tonumber(old.version) + 1
  created = old.createdAt
  move(old.status, 'queued')
  repend(id, old.status, old.updatedAt, nil, nil)
else
  redis.call('HINCRBY', ck, 'documents', 1)
  redis.call('HINCRBY', ck, 'queued', 1)
  redis.call('ZADD', docsKey(), 0, id)
end
redis.call('HDEL', dk, 'filename', 'error')
redis.call('HSET', dk, 'collection', c, 'docId', id, 'version', version, 'jobId', ARGV[5], 'status', 'queued',
  'metadata', ARGV[6], 'contentType', ARGV[7], 'blobKey', ARGV[8], 'size', ARGV[9], 'sha256', ARGV[10],
  'chunks', 0, 'createdAt', created, 'updatedAt', now)
if ARGV[11] == '1' then redis.call('HSET', dk, 'filename', ARGV[12]) end
repend(id, nil, nil, 'queued', now)
local keys = {}
for key in pairs(cjson.decode(ARGV[6])) do keys[#keys + 1] = key end
if #keys > 0 then redis.call('SADD', fieldsKey(), unpack(keys)) end
return {version, created, prev}
`;

/**
 * ARGV: ns, c, docId, version to undo, hasPrevious, then the previous record's version, jobId,
 * status, metadata, contentType, blobKey, size, sha256, chunks, updatedAt, hasFilename,
 * filename, hasError, error. Applies only while the undone version is still current.
 */
const ROLLBACK = `${PROLOGUE}
if not gen then return 0 end
local dk = docKey(ARGV[3])
local cur = redis.call('HMGET', dk, 'version', 'status', 'updatedAt')
local current = cur[1] and tonumber(cur[1]) == tonumber(ARGV[4])
if current then repend(ARGV[3], cur[2], cur[3], nil, nil) end
if ARGV[5] == '1' then
  if not current then return 0 end
  move(cur[2], ARGV[8])
  repend(ARGV[3], nil, nil, ARGV[8], ARGV[15])
  redis.call('HDEL', dk, 'filename', 'error')
  redis.call('HSET', dk, 'version', ARGV[6], 'jobId', ARGV[7], 'status', ARGV[8], 'metadata', ARGV[9],
    'contentType', ARGV[10], 'blobKey', ARGV[11], 'size', ARGV[12], 'sha256', ARGV[13], 'chunks', ARGV[14],
    'updatedAt', ARGV[15])
  if ARGV[16] == '1' then redis.call('HSET', dk, 'filename', ARGV[17]) end
  if ARGV[18] == '1' then redis.call('HSET', dk, 'error', ARGV[19]) end
  return 1
end
if current then
  redis.call('DEL', dk)
  redis.call('ZREM', docsKey(), ARGV[3])
  redis.call('HINCRBY', ck, 'documents', -1)
  redis.call('HINCRBY', ck, cur[2], -1)
end
if tonumber(redis.call('HGET', ck, 'documents')) == 0 then
  redis.call('DEL', ck, fieldsKey())
  redis.call('ZREM', ns .. ':collections', c)
end
return 1
`;

/** ARGV: ns, c, docId, version, status, now, setChunks, chunks, hasError, error. */
const MARK = `${PROLOGUE}
if not gen then return 0 end
local dk = docKey(ARGV[3])
local cur = redis.call('HMGET', dk, 'version', 'status', 'updatedAt')
if not cur[1] or tonumber(cur[1]) ~= tonumber(ARGV[4]) then return 0 end
move(cur[2], ARGV[5])
repend(ARGV[3], cur[2], cur[3], ARGV[5], ARGV[6])
redis.call('HSET', dk, 'status', ARGV[5], 'updatedAt', ARGV[6])
if ARGV[7] == '1' then redis.call('HSET', dk, 'chunks', ARGV[8]) end
if ARGV[9] == '1' then redis.call('HSET', dk, 'error', ARGV[10]) else redis.call('HDEL', dk, 'error') end
return 1
`;

/** ARGV: ns, c, docId. Returns the deleted record's fields, or nil. */
const DELETE = `${PROLOGUE}
if not gen then return false end
local dk = docKey(ARGV[3])
local h = redis.call('HGETALL', dk)
if #h == 0 then return false end
local old = {}
for i = 1, #h, 2 do old[h[i]] = h[i + 1] end
redis.call('HINCRBY', ck, old.status, -1)
repend(ARGV[3], old.status, old.updatedAt, nil, nil)
redis.call('HINCRBY', ck, 'documents', -1)
redis.call('DEL', dk)
redis.call('ZREM', docsKey(), ARGV[3])
return h
`;

/** ARGV: ns, c. Unlists the collection at once; returns its document count (-1: none such). */
const DROP_COLLECTION = `${PROLOGUE}
if not gen then return -1 end
local n = redis.call('ZCARD', docsKey())
redis.call('DEL', ck)
redis.call('UNLINK', fieldsKey())
redis.call('ZREM', ns .. ':collections', c)
if n > 0 then redis.call('SADD', ns .. ':trash', c .. ':' .. gen) end
return n
`;

/**
 * ARGV: ns, "<c>:<gen>", count. Removes up to `count` documents of a dropped generation, and
 * their members of ns:pending.
 */
const PURGE = `
local ns, dropped = ARGV[1], ARGV[2]
local c = string.match(dropped, '^[^:]*')
local docs = ns .. ':docs:' .. dropped
local popped = redis.call('ZPOPMIN', docs, tonumber(ARGV[3]))
for i = 1, #popped, 2 do
  local dk = ns .. ':doc:' .. dropped .. ':' .. popped[i]
  local cur = redis.call('HMGET', dk, 'status', 'updatedAt')
  if (cur[1] == 'queued' or cur[1] == 'processing') and cur[2] then redis.call('ZREM', ns .. ':pending', cur[2] .. c .. ':' .. popped[i]) end
  redis.call('UNLINK', dk)
end
local left = redis.call('ZCARD', docs)
if left == 0 then
  redis.call('SREM', ns .. ':trash', dropped)
  redis.call('UNLINK', ns .. ':fields:' .. dropped)
end
return left
`;

/**
 * ARGV: ns, before (an ISO instant), after (a member; '' = from the start), count. Looks at up
 * to `count` members changed before `before`, after `after`; answers the last member looked at,
 * how many were, and one HGETALL array per member that still names a pending document at that
 * instant. The others (left by a dropped collection) are removed.
 */
const PENDING = `
local ns = ARGV[1]
local pk = ns .. ':pending'
local min = ARGV[3] == '' and '-' or '(' .. ARGV[3]
local members = redis.call('ZRANGEBYLEX', pk, min, '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[4]))
local out = {}
for _, m in ipairs(members) do
  local at, rest = string.sub(m, 1, 24), string.sub(m, 25)
  local sep = string.find(rest, ':', 1, true)
  local h = {}
  if sep then
    local c, id = string.sub(rest, 1, sep - 1), string.sub(rest, sep + 1)
    local gen = redis.call('HGET', ns .. ':coll:' .. c, 'gen')
    if gen then h = redis.call('HGETALL', ns .. ':doc:' .. c .. ':' .. gen .. ':' .. id) end
  end
  local rec = {}
  for i = 1, #h, 2 do rec[h[i]] = h[i + 1] end
  if (rec.status == 'queued' or rec.status == 'processing') and rec.updatedAt == at then out[#out + 1] = h
  else redis.call('ZREM', pk, m) end
end
return {members[#members] or '', #members, out}
`;

/** ARGV: ns, c, docId. */
const GET = `${PROLOGUE}
if not gen then return {} end
return redis.call('HGETALL', docKey(ARGV[3]))
`;

/** ARGV: ns, c, after ('' = from the start), count. One HGETALL array per document. */
const LIST = `${PROLOGUE}
if not gen then return {} end
local min = ARGV[3] == '' and '-' or '(' .. ARGV[3]
local ids = redis.call('ZRANGEBYLEX', docsKey(), min, '+', 'LIMIT', 0, tonumber(ARGV[4]))
local out = {}
for i, id in ipairs(ids) do out[i] = redis.call('HGETALL', docKey(id)) end
return out
`;

/** ARGV: ns, then collection names. The union of their metadata keys. */
const FIELDS = `
local ns = ARGV[1]
local out, seen = {}, {}
for i = 2, #ARGV do
  local gen = redis.call('HGET', ns .. ':coll:' .. ARGV[i], 'gen')
  if gen then
    for _, f in ipairs(redis.call('SMEMBERS', ns .. ':fields:' .. ARGV[i] .. ':' .. gen)) do
      if not seen[f] then seen[f] = true; out[#out + 1] = f end
    end
  end
end
return out
`;

/** ARGV: ns. Per collection, in name order: name, documents, queued, processing, ready, failed. */
const COLLECTIONS = `
local ns = ARGV[1]
local out = {}
for i, name in ipairs(redis.call('ZRANGE', ns .. ':collections', 0, -1)) do
  local v = redis.call('HMGET', ns .. ':coll:' .. name, 'documents', 'queued', 'processing', 'ready', 'failed')
  out[i] = {name, v[1] or '0', v[2] or '0', v[3] or '0', v[4] or '0', v[5] or '0'}
end
return out
`;

export const SCRIPTS = {
  catalogAccept: ACCEPT,
  catalogRollback: ROLLBACK,
  catalogMark: MARK,
  catalogDelete: DELETE,
  catalogDropCollection: DROP_COLLECTION,
  catalogPurge: PURGE,
  catalogGet: GET,
  catalogPending: PENDING,
  catalogList: LIST,
  catalogCollections: COLLECTIONS,
  catalogFields: FIELDS,
} as const;

export type ScriptName = keyof typeof SCRIPTS;
