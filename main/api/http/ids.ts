import crypto from 'node:crypto';

export const newOutcomeId = () => `outc_${crypto.randomBytes(12).toString('hex')}`;
export const newRequestId = () => `req_${crypto.randomBytes(12).toString('hex')}`;
