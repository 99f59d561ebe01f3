// The queue fields the forms offer come from tagqd's own /openapi.json,
// so attributes a newer tagqd has (bounded memory's caps, say) appear
// without a console change, and fields it lacks are not offered.
let doc = null;

export async function openapi() {
  if (!doc) doc = await (await fetch('/openapi.json', { cache: 'no-store' })).json();
  return doc;
}

function resolve(d, prop) {
  const ref = prop.$ref || (prop.anyOf || []).map((a) => a.$ref).find(Boolean);
  return ref ? d.components.schemas[ref.split('/').pop()] : null;
}

// Fields the console never edits: identity, output, objects with their
// own controls (redrive_policy, retry_policy, user_attributes).
const SKIP = new Set(['name', 'state', 'source_queues', 'create_time', 'update_time', 'redrive_policy', 'retry_policy', 'user_attributes']);
// Fixed at creation.
export const IMMUTABLE = new Set(['dead_letter_queue', 'default_tag_name', 'topic_queue', 'priority_queue', 'partitions']);

// queueFields: [{name, kind: 'int'|'bool'|'enum'|'string', help, values}]
// for the settable fields of Queue.
export async function queueFields() {
  const d = await openapi();
  const props = d.components.schemas.v1Queue.properties;
  const out = [];
  for (const [name, p] of Object.entries(props)) {
    if (SKIP.has(name) || p.readOnly) continue;
    const help = (p.description || '').replace(/\s+/g, ' ').trim();
    const target = resolve(d, p);
    const types = [].concat(p.type || []);
    if (target && target.enum) out.push({ name, kind: 'enum', help, values: target.enum });
    else if (p.format === 'int32' || p.format === 'int64' || types.includes('integer')) out.push({ name, kind: 'int', help });
    else if (types.includes('boolean')) out.push({ name, kind: 'bool', help });
    else if (types.includes('string')) out.push({ name, kind: 'string', help });
  }
  return out;
}

// createParams: the boolean query parameters of CreateQueue (no_default_tag).
export async function createParams() {
  const d = await openapi();
  const op = (d.paths['/v1/queues'] || {}).post || {};
  return (op.parameters || []).filter((p) => p.in === 'query' && p.schema && [].concat(p.schema.type).includes('boolean'))
    .map((p) => ({ name: p.name, help: (p.description || '').replace(/\s+/g, ' ').trim() }));
}

export const label = (name) => name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
