import { z } from 'zod';

/** A hand's name within a session. */
export const handName = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'hand names are 1-32 lower-case letters, digits, _ or -, starting with a letter');
/** `POST /v1/sessions/{id}/hands`: attach an environment's hand under a name. */
export const attachBody = z.object({ environment_id: z.string().min(1), name: handName }).strict();
/** `POST /v1/sessions/{id}/hands/{name}/hand_over`. */
export const handOverBody = z.object({ to_session_id: z.string().min(1), as: handName.optional() }).strict();
