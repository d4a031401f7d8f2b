export { packageVersion } from '../version.js';
