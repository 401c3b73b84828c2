"""Redfish error and message payloads (DSP0266 "Error responses", Base message registry)."""

BASE = "Base.1.18"

TEXT = {
    "GeneralError": "A general error has occurred. See Resolution for information on how to resolve the error.",
    "Success": "The request completed successfully.",
    "NoValidSession": "There is no valid session established with the implementation.",
    "ResourceNotFound": "The requested resource of type %s named '%s' was not found.",
    "ResourceMissingAtURI": "The resource at the URI '%s' was not found.",
    "OperationNotAllowed": "The HTTP method is not allowed on this resource.",
    "PreconditionFailed": "The ETag supplied did not match the ETag required to change this resource.",
    "PreconditionRequired": "A precondition header or annotation is required to change the resource.",
    "PropertyUnknown": "The property %s is not in the list of valid properties for the resource.",
    "PropertyNotWritable": "The property %s is a read-only property and cannot be assigned a value.",
    "PropertyValueTypeError": "The value '%s' for the property %s is not a type that the property can accept.",
    "PropertyValueNotInList": "The value '%s' for the property %s is not in the list of acceptable values.",
    "PropertyValueOutOfRange": "The value '%s' for the property %s is not in the supported range of acceptable values.",
    "PropertyValueFormatError": "The value '%s' for the property %s is not a format that the property can accept.",
    "ActionParameterMissing": "The action %s requires the parameter %s to be present in the request body.",
    "ActionParameterValueNotInList": "The value '%s' for the parameter %s in the action %s is not in the list of acceptable values.",
    "ActionParameterValueFormatError": "The value '%s' for the parameter %s in the action %s is not a format that the parameter can accept.",
    "ActionParameterUnknown": "The action %s was submitted with the invalid parameter %s.",
    "MalformedJSON": "The request body submitted was malformed JSON and could not be parsed by the receiving service.",
    "SessionLimitExceeded": "The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.",
    "CreateLimitReachedForResource": "The create operation failed because the resource has reached the limit of possible resources.",
    "ServiceTemporarilyUnavailable": "The service is temporarily unavailable.  Retry in %s seconds.",
    "QueryNotSupported": "Querying is not supported by the implementation.",
    "QueryParameterOutOfRange": "The value '%s' for the query parameter %s is out of range %s.",
    "PayloadTooLarge": "The supplied payload exceeds the maximum size supported by the service.",
    "ResourceInStandby": "The request could not be performed because the resource is in standby.",
    "InsufficientPrivilege": "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.",
}

RESOLUTION = {
    "PreconditionFailed": "Try the operation again using the appropriate ETag.",
    "PreconditionRequired": "Try the request again with the appropriate precondition header (If-Match).",
    "NoValidSession": "Establish a session before attempting any operations.",
    "SessionLimitExceeded": "Reduce the number of other sessions before trying to establish the session or increase the limit of simultaneous sessions, if supported.",
    "ServiceTemporarilyUnavailable": "Wait for the indicated retry duration and retry the operation.",
}


def message(key, *args, related=None, severity="Critical"):
    text = TEXT.get(key, key)
    if "%s" in text:
        try:
            text = text % tuple(str(a) for a in args)
        except TypeError:
            pass
    m = {
        "@odata.type": "#Message.v1_1_1.Message",
        "MessageId": "%s.%s" % (BASE, key),
        "Message": text,
        "MessageArgs": [str(a) for a in args],
        "Severity": severity,
        "MessageSeverity": severity,
        "Resolution": RESOLUTION.get(key, "None."),
    }
    if related:
        m["RelatedProperties"] = list(related)
    return m


def error_body(messages, code=None):
    """The DSP0266 error object around one or more Message objects."""
    if isinstance(messages, dict):
        messages = [messages]
    first = messages[0]
    return {"error": {
        "code": code or first["MessageId"],
        "message": first["Message"],
        "@Message.ExtendedInfo": messages,
    }}


def success_info():
    return {"@Message.ExtendedInfo": [message("Success", severity="OK")]}
