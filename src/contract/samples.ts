import { type DomainEventType, isDomainEventType, PING_EVENT_TYPE } from './event-types.js';
import { OptionError } from '../errors.js';

/**
 * Sample resources, camelCase like the REST API, with ids that refer to one another: the punch
 * belongs to the employee and happened at the location inside the geofence, and so on. The
 * contract does not show the business resources' fields; these are realistic, not authoritative.
 */
const ACCOUNT_TIMEZONE = 'America/Chicago';
const EMPLOYEE_ID = 1001;
const LOCATION_ID = 2001;
const JOB_CODE_ID = 3001;
const POSITION_ID = 4001;
const GROUP_ID = 5001;
const GEOFENCE_ID = 6001;
const SHIFT_ID = 7001;
const SCHEDULE_ID = 7501;
const PAY_PERIOD_ID = 8001;

const RESOURCES = {
  employee: {
    id: EMPLOYEE_ID,
    firstName: 'Ada',
    lastName: 'Moreno',
    email: 'ada.moreno@example.com',
    employeeNumber: 'E-1001',
    status: 'active',
    groupId: GROUP_ID,
    positionId: POSITION_ID,
    defaultLocationId: LOCATION_ID,
    hourlyRate: 24.5,
    hiredOn: '2025-03-17',
    timezone: ACCOUNT_TIMEZONE,
    createdAt: '2025-03-17T14:02:11Z',
    updatedAt: '2026-11-02T08:15:40Z',
  },
  location: {
    id: LOCATION_ID,
    name: 'Riverside Warehouse',
    address: { line1: '410 River St', city: 'Austin', region: 'TX', postalCode: '78701', country: 'US' },
    timezone: ACCOUNT_TIMEZONE,
    geofenceId: GEOFENCE_ID,
    active: true,
    createdAt: '2024-11-04T10:00:00Z',
    updatedAt: '2026-10-12T09:30:00Z',
  },
  job_code: {
    id: JOB_CODE_ID,
    code: 'WH-PICK',
    name: 'Warehouse picking',
    departmentCode: 'OPS',
    billable: true,
    active: true,
    createdAt: '2024-11-04T10:05:00Z',
    updatedAt: '2026-06-01T12:00:00Z',
  },
  position: {
    id: POSITION_ID,
    name: 'Picker',
    defaultJobCodeId: JOB_CODE_ID,
    active: true,
    createdAt: '2024-11-04T10:06:00Z',
    updatedAt: '2026-06-01T12:00:00Z',
  },
  group: {
    id: GROUP_ID,
    name: 'Day shift',
    managerEmployeeIds: [1002],
    employeeCount: 14,
    createdAt: '2024-11-04T10:07:00Z',
    updatedAt: '2026-09-20T16:45:00Z',
  },
  geofence: {
    id: GEOFENCE_ID,
    name: 'Riverside Warehouse perimeter',
    locationId: LOCATION_ID,
    center: { latitude: 30.2642, longitude: -97.7466 },
    radiusMeters: 150,
    active: true,
    createdAt: '2024-11-04T10:08:00Z',
    updatedAt: '2025-01-10T11:00:00Z',
  },
  punch: {
    id: 910001,
    employeeId: EMPLOYEE_ID,
    type: 'in',
    punchedAt: '2026-11-20T14:00:12Z',
    locationId: LOCATION_ID,
    jobCodeId: JOB_CODE_ID,
    source: 'mobile',
    insideGeofence: true,
    coordinates: { latitude: 30.2643, longitude: -97.7465 },
    createdAt: '2026-11-20T14:00:13Z',
    updatedAt: '2026-11-20T14:00:13Z',
  },
  time_entry: {
    id: 920001,
    employeeId: EMPLOYEE_ID,
    locationId: LOCATION_ID,
    jobCodeId: JOB_CODE_ID,
    shiftId: SHIFT_ID,
    startPunchId: 910001,
    endPunchId: 910002,
    startedAt: '2026-11-20T14:00:12Z',
    endedAt: '2026-11-20T22:30:05Z',
    breakMinutes: 30,
    durationMinutes: 480,
    payPeriodId: PAY_PERIOD_ID,
    createdAt: '2026-11-20T22:30:06Z',
    updatedAt: '2026-11-20T22:30:06Z',
  },
  shift: {
    id: SHIFT_ID,
    employeeId: EMPLOYEE_ID,
    locationId: LOCATION_ID,
    positionId: POSITION_ID,
    scheduleId: SCHEDULE_ID,
    startsAt: '2026-11-20T14:00:00Z',
    endsAt: '2026-11-20T22:30:00Z',
    published: false,
    notes: 'Inbound trucks expected at 16:00',
    createdAt: '2026-11-13T18:00:00Z',
    updatedAt: '2026-11-13T18:00:00Z',
  },
  pto_request: {
    id: 930001,
    employeeId: EMPLOYEE_ID,
    policy: 'vacation',
    startsOn: '2026-12-22',
    endsOn: '2026-12-24',
    hours: 24,
    status: 'pending',
    reviewerEmployeeId: null,
    note: 'Family visit',
    createdAt: '2026-11-18T09:12:00Z',
    updatedAt: '2026-11-18T09:12:00Z',
  },
  pay_period: {
    id: PAY_PERIOD_ID,
    startsOn: '2026-11-09',
    endsOn: '2026-11-22',
    status: 'open',
    frequency: 'biweekly',
    approvedAt: null,
    createdAt: '2026-11-09T00:00:00Z',
    updatedAt: '2026-11-09T00:00:00Z',
  },
  time_card: {
    id: 940001,
    employeeId: EMPLOYEE_ID,
    payPeriodId: PAY_PERIOD_ID,
    regularMinutes: 4560,
    overtimeMinutes: 120,
    status: 'submitted',
    reviewerEmployeeId: null,
    createdAt: '2026-11-22T23:00:00Z',
    updatedAt: '2026-11-22T23:00:00Z',
  },
  schedule: {
    id: SCHEDULE_ID,
    locationId: LOCATION_ID,
    startsOn: '2026-11-16',
    endsOn: '2026-11-22',
    shiftIds: [SHIFT_ID],
    status: 'draft',
    publishedAt: null,
    createdAt: '2026-11-10T15:00:00Z',
    updatedAt: '2026-11-13T18:00:00Z',
  },
} as const;

const REVIEWED_AT = '2026-11-19T10:00:00Z';
const MANAGER_ID = 1002;

/** How the action named in an event type changes the resource (the `.created` etc. keep it as is). */
const ACTION_CHANGES: Partial<Record<DomainEventType, Record<string, unknown>>> = {
  'employee.updated': { hourlyRate: 25.75, updatedAt: '2026-11-20T09:00:00Z' },
  'employee.deleted': { status: 'deactivated', updatedAt: '2026-11-20T09:00:00Z' },
  'punch.updated': { punchedAt: '2026-11-20T14:00:00Z', source: 'manager_edit', updatedAt: '2026-11-20T15:10:00Z' },
  'shift.published': { published: true, updatedAt: '2026-11-14T09:00:00Z' },
  'pto_request.approved': { status: 'approved', reviewerEmployeeId: MANAGER_ID, updatedAt: REVIEWED_AT },
  'pto_request.denied': { status: 'denied', reviewerEmployeeId: MANAGER_ID, updatedAt: REVIEWED_AT },
  'pto_request.cancelled': { status: 'cancelled', updatedAt: REVIEWED_AT },
  'pay_period.approved': { status: 'approved', approvedAt: '2026-11-23T12:00:00Z', updatedAt: '2026-11-23T12:00:00Z' },
  'pay_period.reopened': { status: 'open', approvedAt: null, updatedAt: '2026-11-24T08:00:00Z' },
  'time_card.approved': { status: 'approved', reviewerEmployeeId: MANAGER_ID, updatedAt: '2026-11-23T11:00:00Z' },
  'time_card.rejected': { status: 'rejected', reviewerEmployeeId: MANAGER_ID, updatedAt: '2026-11-23T11:00:00Z' },
  'schedule.published': { status: 'published', publishedAt: '2026-11-14T09:00:00Z', updatedAt: '2026-11-14T09:00:00Z' },
};

/**
 * A realistic `data` resource for any catalogue event type (a fresh copy each call). The ping type
 * has no domain resource: its data is the endpoint, which only the sender knows, so it is refused here.
 */
export function sampleData(type: string): Record<string, unknown> {
  if (!isDomainEventType(type)) {
    const why = type === PING_EVENT_TYPE ? 'ping data is the endpoint record' : 'unknown event type';
    throw new OptionError(`No sample data for ${JSON.stringify(type)}: ${why}.`);
  }
  const resource = type.slice(0, type.indexOf('.')) as keyof typeof RESOURCES;
  return structuredClone({ ...RESOURCES[resource], ...ACTION_CHANGES[type] });
}
