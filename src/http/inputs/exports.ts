import type { Request } from 'express';
import { toId } from '../../lib/http';
import type { ContactExportFilter } from '../../services/audience/contact-export';
import { field } from '../validation';

/** The optional filters of a contact export (`contact_type_id`, `segment_id`, in the query). */
export function contactExportFields() {
  return [field('contact_type_id', 'query').optional().integer(1), field('segment_id', 'query').optional().integer(1)];
}

export function contactExportFilter(req: Request): ContactExportFilter {
  const contactTypeId = toId(req.query.contact_type_id);
  const segmentId = toId(req.query.segment_id);
  return { contactTypeId: contactTypeId ?? undefined, segmentId: segmentId ?? undefined };
}
