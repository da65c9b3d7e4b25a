import { examplesOf } from '../http/openapi-examples.js';
import { ConsistencyProofSchema, InclusionProofSchema, JwksSchema, PendingProofSchema, ProofBundleSchema, SignedCheckpointSchema, VerifierKeySchema } from './schemas.js';

/** One demo deployment's answers: the bundle verifies against the key set. */
export const proofExamples = [
  examplesOf(PendingProofSchema, {
    signed: {
      summary: 'Signed, not yet sealed into the log',
      value: { status: 'pending', proofId: 'prf_01M8TGT6B3ZQ2R3NPN2RY9TJRJ', recordId: 'rec_01M8TGT66B5T35ATMCVERCFDDH', createdAt: '2026-03-12T09:45:12.931Z' },
    },
  }),
  examplesOf(ProofBundleSchema, {
    sealed: {
      summary: 'A sealed completion proof',
      description: 'From one demo deployment, as the other proof examples: it verifies offline against the `Jwks` example (`wo proof verify bundle.json --keys jwks.json`).',
      value: {
        status: 'sealed',
        version: 1,
        mediaType: 'application/vnd.wo.proof+json;version=1',
        proofId: 'prf_01M8TGT6B3ZQ2R3NPN2RY9TJRJ',
        recordId: 'rec_01M8TGT66B5T35ATMCVERCFDDH',
        jws: 'eyJhbGciOiJFZERTQSIsImtpZCI6IklRNDFNR2djSGYxTWhRTkJWNGc3VFE3Z3pNNzNVZFhWOHNYdlFqU1Z6SlkiLCJ0eXAiOiJKT1NFIiwiY3R5IjoiYXBwbGljYXRpb24vdm5kLndvLmNvbXBsZXRpb24tc3RhdGVtZW50K2pzb247dmVyc2lvbj0xIn0.eyJhc3NpZ25lZSI6IlNhbSBPa2Fmb3IgKEhhcmJvdXIgUGx1bWJpbmcgTHRkKSIsImNvbXBsZXRlZEF0IjoiMjAyNi0wMy0xMlQwOTo0NToxMi45MzFaIiwiZXZpZGVuY2UiOlt7ImF0dGFjaG1lbnRJZCI6ImZpbGVfMDFNOFRHVDY5UlhOWENIMlBLOTVHREtRWkMiLCJtZWRpYVR5cGUiOiJpbWFnZS9qcGVnIiwibmFtZSI6InRhcC1hZnRlci5qcGciLCJzaGEyNTYiOiI2ZDI2NTlkZTBkYTMyNjgzYjgxODA2ZmE0MWJjZTJlMjc0NjBjZjg4MTNjZGMzMDRlMWRhZWYwMzk0ODYzYzcyIiwic2l6ZSI6NDgwMjB9XSwiaGlzdG9yeSI6W3siYWN0aW9uIjoiY3JlYXRlZCIsImFjdG9yIjoiYXBpX2tleTprZXlfMDFNOFRHVDVZUk4xQkMyWFRINzdWNjZUOU4iLCJhdCI6IjIwMjYtMDMtMDlUMDk6MTQ6MjcuNTEyWiIsImRhdGEiOnt9LCJmcm9tIjpudWxsLCJ0byI6Ik9QRU4ifSx7ImFjdGlvbiI6InVwZGF0ZWQiLCJhY3RvciI6ImFwaV9rZXk6a2V5XzAxTThUR1Q1WVJOMUJDMlhUSDc3VjY2VDlOIiwiYXQiOiIyMDI2LTAzLTA5VDA5OjIwOjQ0LjE5MFoiLCJkYXRhIjp7ImNoYW5nZXMiOnsiZHVlQXQiOnsiZnJvbSI6IjIwMjYtMDMtMTFUMTc6MDA6MDAuMDAwWiIsInRvIjoiMjAyNi0wMy0xMFQxMjowMDowMC4wMDBaIn0sInByaW9yaXR5Ijp7ImZyb20iOiJISUdIIiwidG8iOiJVUkdFTlQifX19LCJmcm9tIjpudWxsLCJ0byI6bnVsbH0seyJhY3Rpb24iOiJjb21tZW50ZWQiLCJhY3RvciI6ImFwaV9rZXk6a2V5XzAxTThUR1Q1WVJOMUJDMlhUSDc3VjY2VDlOIiwiYXQiOiIyMDI2LTAzLTA5VDA5OjMxOjA5LjY1NVoiLCJkYXRhIjp7ImJvZHkiOiJUZW5hbnQgaXMgaG9tZSBmcm9tIDE0OjAwOyB0aGUga2V5IHNhZmUgY29kZSBpcyB3aXRoIHRoZSBzaXRlIG9mZmljZS4iLCJjb21tZW50SWQiOiJjbXRfMDFNOFRHVDY2Vlk1UURKQUpNWUE3SjhWWlEifSwiZnJvbSI6bnVsbCwidG8iOm51bGx9LHsiYWN0aW9uIjoiYXNzaWduIiwiYWN0b3IiOiJhcGlfa2V5OmtleV8wMU04VEdUNVlSTjFCQzJYVEg3N1Y2NlQ5TiIsImF0IjoiMjAyNi0wMy0wOVQxMDowMjo1MS4wMjNaIiwiZGF0YSI6eyJhc3NpZ25lZSI6IlNhbSBPa2Fmb3IgKEhhcmJvdXIgUGx1bWJpbmcgTHRkKSIsInByZXZpb3VzQXNzaWduZWUiOm51bGx9LCJmcm9tIjoiT1BFTiIsInRvIjoiQVNTSUdORUQifSx7ImFjdGlvbiI6InN0YXJ0IiwiYWN0b3IiOiJhcGlfa2V5OmtleV8wMU04VEdUNVlSTjFCQzJYVEg3N1Y2NlQ5TiIsImF0IjoiMjAyNi0wMy0wOVQxMzo1NTozMC4xMTJaIiwiZGF0YSI6e30sImZyb20iOiJBU1NJR05FRCIsInRvIjoiSU5fUFJPR1JFU1MifSx7ImFjdGlvbiI6ImhvbGQiLCJhY3RvciI6ImFwaV9rZXk6a2V5XzAxTThUR1Q1WVJOMUJDMlhUSDc3VjY2VDlOIiwiYXQiOiIyMDI2LTAzLTA5VDE0OjMwOjAyLjc2NFoiLCJkYXRhIjp7InJlYXNvbiI6IldhaXRpbmcgZm9yIGEgcmVwbGFjZW1lbnQgY2FydHJpZGdlOyBkZWxpdmVyeSBleHBlY3RlZCBUaHVyc2RheS4ifSwiZnJvbSI6IklOX1BST0dSRVNTIiwidG8iOiJPTl9IT0xEIn0seyJhY3Rpb24iOiJyZXN1bWUiLCJhY3RvciI6ImFwaV9rZXk6a2V5XzAxTThUR1Q1WVJOMUJDMlhUSDc3VjY2VDlOIiwiYXQiOiIyMDI2LTAzLTEyVDA5OjEwOjE5LjMwNVoiLCJkYXRhIjp7fSwiZnJvbSI6Ik9OX0hPTEQiLCJ0byI6IklOX1BST0dSRVNTIn0seyJhY3Rpb24iOiJhdHRhY2htZW50X2FkZGVkIiwiYWN0b3IiOiJhcGlfa2V5OmtleV8wMU04VEdUNVlSTjFCQzJYVEg3N1Y2NlQ5TiIsImF0IjoiMjAyNi0wMy0xMlQwOTo0MTo1NS41ODBaIiwiZGF0YSI6eyJhdHRhY2htZW50SWQiOiJmaWxlXzAxTThUR1Q2OVJYTlhDSDJQSzk1R0RLUVpDIiwiZmlsZW5hbWUiOiJ0YXAtYWZ0ZXIuanBnIiwibWVkaWFUeXBlIjoiaW1hZ2UvanBlZyIsInNoYTI1NiI6IjZkMjY1OWRlMGRhMzI2ODNiODE4MDZmYTQxYmNlMmUyNzQ2MGNmODgxM2NkYzMwNGUxZGFlZjAzOTQ4NjNjNzIiLCJzaXplIjo0ODAyMH0sImZyb20iOm51bGwsInRvIjpudWxsfSx7ImFjdGlvbiI6ImNvbXBsZXRlIiwiYWN0b3IiOiJhcGlfa2V5OmtleV8wMU04VEdUNVlSTjFCQzJYVEg3N1Y2NlQ5TiIsImF0IjoiMjAyNi0wMy0xMlQwOTo0NToxMi45MzFaIiwiZGF0YSI6eyJldmlkZW5jZSI6W3siYXR0YWNobWVudElkIjoiZmlsZV8wMU04VEdUNjlSWE5YQ0gyUEs5NUdES1FaQyIsIm1lZGlhVHlwZSI6ImltYWdlL2pwZWciLCJuYW1lIjoidGFwLWFmdGVyLmpwZyIsInNoYTI1NiI6IjZkMjY1OWRlMGRhMzI2ODNiODE4MDZmYTQxYmNlMmUyNzQ2MGNmODgxM2NkYzMwNGUxZGFlZjAzOTQ4NjNjNzIiLCJzaXplIjo0ODAyMH1dLCJyZXNvbHV0aW9uTm90ZXMiOiJSZXBsYWNlZCB0aGUgdGFwIGNhcnRyaWRnZSBhbmQgdGhlIGJhc2UgTy1yaW5nOyBubyBsZWFrIGFmdGVyIDEwIG1pbnV0ZXMgcnVubmluZy4ifSwiZnJvbSI6IklOX1BST0dSRVNTIiwidG8iOiJDT01QTEVURUQifV0sIm9yZyI6eyJpZCI6Im9yZ18wMU04VEdUNVlRNFAwUVlDTlY4V1BRWURIVCJ9LCJwcm9vZklkIjoicHJmXzAxTThUR1Q2QjNaUTJSM05QTjJSWTlUSlJKIiwicmVjb3JkIjp7ImFkZHJlc3MiOiJGbGF0IDNCLCAxNCBIYXJib3VyIFJvYWQsIFBvcnRzbW91dGggUE8xIDNBQiIsImFzc2V0SWQiOm51bGwsImNhdGVnb3J5SWQiOiJjYXRfMDFNOFRHVDYzVFZZWkZEUEZZWDBFUzJRQ1QiLCJjcmVhdGVkQXQiOiIyMDI2LTAzLTA5VDA5OjE0OjI3LjUxMloiLCJkZXNjcmlwdGlvbiI6IktpdGNoZW4gdGFwIGxlYWtzIGF0IHRoZSBiYXNlIHdoZW5ldmVyIGl0IGlzIHR1cm5lZCBvbjsgd2F0ZXIgaXMgcG9vbGluZyBpbiB0aGUgY3VwYm9hcmQgYmVsb3cuIiwiZHVlQXQiOiIyMDI2LTAzLTEwVDEyOjAwOjAwLjAwMFoiLCJleHRlcm5hbFJlZiI6IlBNLTQ0ODcxIiwiaWQiOiJyZWNfMDFNOFRHVDY2QjVUMzVBVE1DVkVSQ0ZEREgiLCJsb2NhdGlvbklkIjpudWxsLCJtZXRhZGF0YSI6eyJ0ZW5hbnRQaG9uZSI6Iis0NCA3NzAwIDkwMDEyMyIsInVuaXQiOiIzQiJ9LCJwcmlvcml0eSI6IlVSR0VOVCIsInJlcXVlc3Rlck5hbWUiOiJEYW5hIFdoaXRmaWVsZCIsInN0YXR1cyI6IkNPTVBMRVRFRCIsInZlcnNpb24iOjd9LCJyZXNvbHV0aW9uTm90ZXMiOiJSZXBsYWNlZCB0aGUgdGFwIGNhcnRyaWRnZSBhbmQgdGhlIGJhc2UgTy1yaW5nOyBubyBsZWFrIGFmdGVyIDEwIG1pbnV0ZXMgcnVubmluZy4iLCJzdXBlcnNlZGVzIjpudWxsLCJ0eXBlIjoid28uY29tcGxldGlvbiIsInYiOjF9.rlgT3ySLvmM_zFdUZFGKYmeTh6A1cSvEGABvHLvW12f6KOUtIOSJ6fTrap5IokKw3GQxFdqes5eiwgluxuAXAQ',
        leafIndex: 0,
        treeSize: 1,
        inclusionProof: [],
        checkpoint: 'work-orders.example.com/work-orders/log\n1\n8rQRWiVksu/tB4mk38af5MknCD7/rwO4tCS0ZU+Jd1g=\n\n— work-orders.example.com/work-orders/log XiOSKeCD5pbi2d9jdHUIr9iG+divMcNbYQqDLBiTRmvSLZFfTn5a0p5hXrENwpNmy0wIGDmDXq+mDCitVGBAd7nObwc=\n',
        keys: { statementKid: 'IQ41MGgcHf1MhQNBV4g7TQ7gzM73UdXV8sXvQjSVzJY', logKeyName: 'work-orders.example.com/work-orders/log', logKeyId: '5e239229' },
      },
    },
  }),
  examplesOf(InclusionProofSchema, {
    firstLeaf: {
      summary: 'The first leaf of a tree of two',
      value: {
        leafIndex: 0,
        treeSize: 2,
        leafHash: '8rQRWiVksu/tB4mk38af5MknCD7/rwO4tCS0ZU+Jd1g=',
        inclusionProof: ['Ee6nG+p86M2cJuQB6G10oQltmVDQwsRlmwwS+B7XmVc='],
      },
    },
  }),
  examplesOf(ConsistencyProofSchema, {
    oneToTwo: {
      summary: 'The tree of two extends the tree of one',
      value: { first: 1, second: 2, consistencyProof: ['Ee6nG+p86M2cJuQB6G10oQltmVDQwsRlmwwS+B7XmVc='] },
    },
  }),
  examplesOf(SignedCheckpointSchema, {
    latest: {
      summary: 'The latest checkpoint, signed by the log key',
      value: 'work-orders.example.com/work-orders/log\n2\nzBvs+8tXaaW6MFcVABNEUUqU8RVFmtRgYO3dhhMXoBk=\n\n— work-orders.example.com/work-orders/log XiOSKX+4kcO/ZtTqs3wql+sLLT9l1IeoRPXnqYbLEAHvCQnsWdRl2E+GOCzkbjJEOWuCm3J+jLLFXR8ogQLzC48OpAE=\n',
    },
  }),
  examplesOf(VerifierKeySchema, {
    logKey: {
      summary: 'The log key as a signed-note verifier key',
      value: 'work-orders.example.com/work-orders/log+5e239229+AV34itckJMQaw/xh37gKQ218GrVku0tHEhJ5ORCy/0iy\n',
    },
  }),
  examplesOf(JwksSchema, {
    keys: {
      summary: 'The statement key and the transparency-log key',
      value: {
        keys: [
          {
            kty: 'OKP',
            crv: 'Ed25519',
            x: 'p2BiYvhBbNw9IdY3QMkR_CiHvJMf8JNp4PioT4RnDlw',
            kid: 'IQ41MGgcHf1MhQNBV4g7TQ7gzM73UdXV8sXvQjSVzJY',
            use: 'sig',
            alg: 'EdDSA',
            'x-wo-role': 'statement',
            'x-wo-created-at': '2026-03-09T08:02:11.000Z',
          },
          {
            kty: 'OKP',
            crv: 'Ed25519',
            x: 'XfiK1yQkxBrD_GHfuApDbXwatWS7S0cSEnk5ELL_SLI',
            kid: 'iQT9XKq5mdLZ7woMrqSBFb6HzDNiQLa2gz4t__SriM8',
            use: 'sig',
            alg: 'EdDSA',
            'x-wo-role': 'transparency-log',
            'x-wo-log-origin': 'work-orders.example.com/work-orders/log',
            'x-wo-note-key-id': '5e239229',
            'x-wo-verifier-key': 'work-orders.example.com/work-orders/log+5e239229+AV34itckJMQaw/xh37gKQ218GrVku0tHEhJ5ORCy/0iy',
          },
        ],
      },
    },
  }),
];
