import { z } from 'zod';
import { ApiError } from '../errors';
import { neverYet } from './not-yet';

/** Most keys a metadata bag holds (the API's limit, on the stored bag as well as on a body). */
export const MAX_METADATA_KEYS = 16;

/** Metadata: up to 16 string pairs, keys ≤ 64 and values ≤ 512 characters. */
export const metadata = z
  .record(z.string().min(1).max(64), z.string().max(512))
  .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `metadata has at most ${MAX_METADATA_KEYS} keys`);

/** Metadata patch: a null value removes the key. */
export const metadataPatch = z
  .record(z.string().min(1).max(64), z.string().max(512).nullable())
  .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `metadata has at most ${MAX_METADATA_KEYS} keys`);

/**
 * The stored bag after a patch. The limit is on the stored bag, not only on the patch: 16 new
 * keys over 16 stored ones would otherwise leave 32 (a 400 naming `metadata`, nothing stored).
 */
export function applyMetadataPatch(current: Record<string, string>, patch: Record<string, string | null> | null | undefined): Record<string, string> {
  if (patch === null) return {};
  if (patch === undefined) return current;
  const next = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  const keys = Object.keys(next).length;
  if (keys > MAX_METADATA_KEYS) {
    throw new ApiError('invalid_request_error', `metadata: the patch would leave ${keys} keys; a metadata bag holds at most ${MAX_METADATA_KEYS} (set keys to null to remove them)`);
  }
  return next;
}

export const permissionPolicy = z.discriminatedUnion('type', [
  z.object({ type: z.literal('always_allow') }),
  z.object({ type: z.literal('always_ask') }),
  // The API's per-call judgement: Corral has no rule for it yet, so it is refused rather than
  // silently treated as another policy.
  z.object({ type: z.literal('auto') }).refine(() => false, { message: "permission_policy 'auto' is not supported by Corral yet; use always_allow or always_ask" }),
]);

export const textBlock = z.object({ type: z.literal('text'), text: z.string() }).strict();
const base64Source = z.object({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() }).strict();
const urlSource = z.object({ type: z.literal('url'), url: z.string().url() }).strict();
// No Files API in Corral: a file_id names nothing it could send to the model.
const fileSource = neverYet(z.object({ type: z.literal('file'), file_id: z.string().min(1) }).strict(), "source type 'file'", 'no Files API');
export const imageBlock = z.object({ type: z.literal('image'), source: z.discriminatedUnion('type', [base64Source, urlSource, fileSource]) }).strict();
export const documentBlock = z
  .object({
    type: z.literal('document'),
    source: z.discriminatedUnion('type', [
      base64Source,
      urlSource,
      fileSource,
      z.object({ type: z.literal('text'), media_type: z.literal('text/plain'), data: z.string() }).strict(),
    ]),
    context: z.string().nullish(),
    title: z.string().nullish(),
  })
  .strict();
export const redactedBlock = z.object({ type: z.literal('redacted') }).strict();
export const searchResultBlock = z
  .object({
    type: z.literal('search_result'),
    source: z.string(),
    title: z.string(),
    content: z.array(textBlock),
    citations: z.object({ enabled: z.boolean() }).strict(),
  })
  .strict();
