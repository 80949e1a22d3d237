import type { Request } from 'express';
import { LIMITS } from '../lib/constants';
import { sendSuccess, sendSuccessUnderErrors } from '../lib/envelope';
import { asArray, toId } from '../lib/http';
import { field, validate } from '../lib/validation';
import type { Services } from '../services';
import type { SegmentInput } from '../services/segments';
import { deleteById } from './crud';
import { ApiRoutes, ctxOf, listMessage, pagingOf } from './routes';
import { sendStreamedList } from './stream-list';

export const segmentRules = () => [
  field('segment_name').required().string().maxLength(LIMITS.string),
  field('contact_type_id').required().integer(),
];

/** A recipient stored by hand (segment_id aside). */
export const recipientRules = () => [
  field('first_name').required().string().maxLength(LIMITS.string),
  field('last_name').required().string().maxLength(LIMITS.string),
  field('email').required().string().email(),
];

function segmentInput(req: Request): SegmentInput {
  const body = req.body as Record<string, unknown>;
  return {
    segment_name: String(body.segment_name),
    contact_type_id: toId(body.contact_type_id) ?? 0,
    select_field: asArray(body.select_field),
    select_operator: asArray(body.select_operator),
    value: asArray(body.value),
    query_type: body.query_type,
  };
}

export function mountSegments(routes: ApiRoutes, { segments }: Services): void {
  routes.get('/segment/list', async (req, res) => {
    sendSuccess(res, listMessage('segments', await segments.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/segment/save', validate(...segmentRules()), async (req, res) => {
    await segments.save(ctxOf(req), segmentInput(req));
    sendSuccess(res, 'Saved Successfully');
  });

  routes.post('/segment/update', validate(field('segment_id', 'query').required().integer(), ...segmentRules()), async (req, res) => {
    await segments.update(ctxOf(req), toId(req.query.segment_id) ?? 0, segmentInput(req));
    sendSuccess(res, 'Updated Successfully');
  });

  routes.delete('/segment/delete', validate(field('segment_id', 'query').required().integer()), async (req, res) => {
    await segments.remove(ctxOf(req), toId(req.query.segment_id) ?? 0);
    sendSuccessUnderErrors(res, 'Deleted Successfully');
  });

  routes.get('/segment/email/list', validate(field('segment_id', 'query').required().integer()), async (req, res) => {
    const segmentId = toId(req.query.segment_id) ?? 0;
    const paging = pagingOf(req);
    if (paging) return sendSuccess(res, listMessage('contactEmails', await segments.recipientsPage(ctxOf(req), segmentId, paging)));
    await sendStreamedList(res, 'contactEmails', segments.recipientChunks(ctxOf(req), segmentId));
  });

  routes.post(
    '/segment/email/store',
    validate(field('segment_id').required().integer(), ...recipientRules()),
    async (req, res) => {
      const { segment_id: segmentId, first_name: firstName, last_name: lastName, email } = req.body as Record<string, unknown>;
      await segments.storeRecipient(ctxOf(req), { segment_id: toId(segmentId) ?? 0, first_name: String(firstName), last_name: String(lastName), email: String(email) });
      sendSuccess(res, 'Added Successfully');
    },
  );

  deleteById(routes, '/segment/email/delete', 'segment_recipient_id', segments.removeRecipients);
}
