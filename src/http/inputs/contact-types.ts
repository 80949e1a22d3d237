import { LIMITS } from '../../lib/constants';
import { field } from '../validation';

export const contactTypeName = () => field('name').required().string().minLength(LIMITS.contactTypeNameMin).maxLength(LIMITS.string);
